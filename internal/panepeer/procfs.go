package panepeer

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/procfs"
)

// ProcFS reads processes from a Linux procfs mount.
type ProcFS struct {
	Dir string // "/proc" when empty
}

func (p ProcFS) fs() procfs.FS { return procfs.FS{Root: p.Dir} }

// Stat reads pid's parent and session (internal/procfs).
func (p ProcFS) Stat(pid int) (Stat, error) {
	st, err := p.fs().Stat(pid)
	if err != nil {
		return Stat{}, err
	}
	return Stat{PPID: st.PPID, SID: st.Session}, nil
}

// Session is getsid(pid), read from the kernel whatever Dir is.
func (ProcFS) Session(pid int) (int, error) { return unix.Getsid(pid) }

// Environ reads the environment the process was started with; later
// setenv calls inside the process do not show here.
func (p ProcFS) Environ(pid int, key string) (string, error) { return p.fs().Environ(pid, key) }

// System returns the Procs of this system, or nil when other processes
// cannot be read here.
func System() Procs {
	p := ProcFS{}
	if _, err := p.Stat(os.Getpid()); err == nil {
		return p
	}
	return otherProcs()
}
