package native

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// inspectProcess reads /proc/PID/cmdline and comm.
func inspectProcess(pid int) (procInfo, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	cmdline, err := os.ReadFile(dir + "cmdline")
	if err != nil {
		return procInfo{}, err
	}
	comm, err := os.ReadFile(dir + "comm")
	if err != nil {
		return procInfo{}, err
	}
	return procInfo{Comm: string(bytes.TrimRight(comm, "\n")), Argv: parseCmdline(cmdline)}, nil
}

// processCwd returns the working directory of pid, or "".
func processCwd(pid int) string {
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	if err != nil {
		return ""
	}
	return cwd
}

// groupAlive reports whether any process of the group pgid still exists.
func groupAlive(pgid int) bool {
	err := unix.Kill(-pgid, 0)
	return err == nil || err == unix.EPERM
}
