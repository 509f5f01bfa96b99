package native

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// inspectProcess reads /proc/PID/cmdline, and comm only when the command
// line is empty (a zombie). Plain system calls into a stack buffer: this
// runs once a second for every pane whose foreground is not an agent, and
// os.ReadFile costs three times as much.
func inspectProcess(pid int) (procInfo, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	var buf [4096]byte
	n, err := readSmall(dir+"cmdline", buf[:])
	if err != nil {
		return procInfo{}, err
	}
	info := procInfo{Argv: parseCmdline(buf[:n])}
	if len(info.Argv) == 0 {
		if n, err = readSmall(dir+"comm", buf[:]); err != nil {
			return procInfo{}, err
		}
		info.Comm = string(bytes.TrimRight(buf[:n], "\n"))
	}
	return info, nil
}

// readSmall reads the start of a small file into buf.
func readSmall(path string, buf []byte) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return 0, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return n, nil
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
