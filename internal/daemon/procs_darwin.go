package daemon

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

func (sysctlProcs) parent(pid int) (int, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	if kp.Proc.P_pid != int32(pid) {
		return 0, errNoProcInfo
	}
	return int(kp.Eproc.Ppid), nil
}

func (sysctlProcs) session(pid int) (int, error) { return unix.Getsid(pid) }

func (sysctlProcs) environ(int, string) (string, error) { return "", errNoProcInfo }

func otherProcs() procTree { return sysctlProcs{} }
