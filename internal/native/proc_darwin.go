package native

import (
	"golang.org/x/sys/unix"
)

// inspectProcess reads the process's short name (kern.proc.pid) and its
// arguments (kern.procargs2), as tmux's osdep-darwin.c does, without cgo.
func inspectProcess(pid int) (procInfo, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return procInfo{}, err
	}
	info := procInfo{Comm: unix.ByteSliceToString(kp.Proc.P_comm[:])}
	if raw, err := unix.SysctlRaw("kern.procargs2", pid); err == nil {
		info.Argv = parseProcArgs2(raw)
	}
	return info, nil
}

// processCwd is not read on macOS (it needs libproc); the estimator falls
// back to OSC 7 and the pane's directory.
func processCwd(int) string { return "" }

// groupAlive reports whether any process of the group pgid still exists.
func groupAlive(pgid int) bool {
	err := unix.Kill(-pgid, 0)
	return err == nil || err == unix.EPERM
}
