package native

import (
	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/procfs"
)

// inspectProcess reads /proc/PID/cmdline, and comm only when the command
// line is empty (a zombie). Plain system calls into a stack buffer: this
// runs once a second for every pane whose foreground is not an agent, and
// os.ReadFile costs three times as much.
func inspectProcess(pid int) (procInfo, error) {
	var buf [4096]byte
	n, err := procfs.FS{}.ReadInto(pid, "cmdline", buf[:])
	if err != nil {
		return procInfo{}, err
	}
	info := procInfo{Argv: parseCmdline(buf[:n])}
	if len(info.Argv) == 0 {
		if info.Comm, err = (procfs.FS{}).Comm(pid); err != nil {
			return procInfo{}, err
		}
	}
	return info, nil
}

// processCwd returns the working directory of pid, or "".
func processCwd(pid int) string {
	cwd, _ := procfs.FS{}.Cwd(pid)
	return cwd
}

// groupAlive reports whether any process of the group pgid still exists.
func groupAlive(pgid int) bool {
	err := unix.Kill(-pgid, 0)
	return err == nil || err == unix.EPERM
}
