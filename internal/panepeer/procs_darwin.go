package panepeer

import (
	"errors"

	"golang.org/x/sys/unix"
)

// errNoProcInfo means this system cannot tell that about another process.
var errNoProcInfo = errors.New("process information unavailable")

// sysctlProcs reads processes through sysctl where there is no procfs. The
// environment of another process is not read: only ancestry and session
// place a peer.
type sysctlProcs struct{}

func (sysctlProcs) Stat(pid int) (Stat, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return Stat{}, err
	}
	if kp.Proc.P_pid != int32(pid) {
		return Stat{}, errNoProcInfo
	}
	sid, err := unix.Getsid(pid)
	if err != nil {
		return Stat{}, err
	}
	return Stat{PPID: int(kp.Eproc.Ppid), SID: sid}, nil
}

func (sysctlProcs) Session(pid int) (int, error) { return unix.Getsid(pid) }

func (sysctlProcs) Environ(int, string) (string, error) { return "", errNoProcInfo }

func otherProcs() Procs { return sysctlProcs{} }
