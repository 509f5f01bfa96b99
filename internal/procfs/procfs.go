// Package procfs owns reading Linux's /proc: a process's stat line, its
// command line, name, executable, working directory, environment and
// open files, its children and every process of the machine. Every other
// package that needs to know about a process asks here, so that the
// format's traps (a command name holding ") ", files that report no size,
// a task list instead of one children file) are handled once.
//
// Reads use plain system calls into small buffers: the daemon reads the
// stat of every pane's processes every few seconds, and os.ReadFile and
// os.ReadDir also stat each file and try to register it with the runtime
// poller, which was a third of an idle daemon's CPU with 50 panes.
package procfs

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// FS is a procfs mount; the zero value is the system's /proc.
type FS struct {
	Root string // "/proc" when empty
}

func (fs FS) root() string {
	if fs.Root == "" {
		return "/proc"
	}
	return fs.Root
}

func (fs FS) path(pid int, name string) string {
	return fs.root() + "/" + strconv.Itoa(pid) + "/" + name
}

// ErrMalformed is a stat line that does not parse.
var ErrMalformed = errors.New("malformed /proc stat line")

// Stat is what /proc/PID/stat says of a process that Muster uses.
type Stat struct {
	PID     int
	Comm    string // the command name, at most 15 bytes
	State   byte   // R, S, D, Z, T, …
	PPID    int
	PGRP    int
	Session int
	// UTime and STime are the CPU time used, in clock ticks; CUTime and
	// CSTime that of its children it has reaped.
	UTime, STime, CUTime, CSTime uint64
	// StartTime is when the process started, in clock ticks since boot:
	// with the pid, it names one process (a pid is reused, the pair is
	// not).
	StartTime uint64
	// RSSPages is the resident set, in pages.
	RSSPages int64
}

// Zombie reports whether the process has ended and waits to be reaped.
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// Stat reads /proc/PID/stat.
func (fs FS) Stat(pid int) (Stat, error) {
	var buf [1024]byte
	n, err := ReadSmall(fs.path(pid, "stat"), buf[:])
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(buf[:n])
}

// ParseStat parses a stat line: "pid (comm) state ppid pgrp session …".
// The command name may hold spaces and parentheses, so the fields are
// counted after its last ')'.
func ParseStat(b []byte) (Stat, error) {
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return Stat{}, ErrMalformed
	}
	var st Stat
	var err error
	if st.PID, err = strconv.Atoi(string(bytes.TrimSpace(b[:open]))); err != nil {
		return Stat{}, ErrMalformed
	}
	st.Comm = string(b[open+1 : close])
	// f[0] is field 3 (state), so field k is f[k-3].
	f := bytes.Fields(b[close+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return Stat{}, ErrMalformed
	}
	st.State = f[0][0]
	ints := []*int{&st.PPID, &st.PGRP, &st.Session}
	for i, p := range ints {
		if *p, err = strconv.Atoi(string(f[i+1])); err != nil {
			return Stat{}, ErrMalformed
		}
	}
	// The later fields are absent from some kernels' zombies; a short
	// line leaves them zero.
	u64 := func(k int) uint64 {
		if k-3 >= len(f) {
			return 0
		}
		v, _ := strconv.ParseUint(string(f[k-3]), 10, 64)
		return v
	}
	st.UTime, st.STime, st.CUTime, st.CSTime, st.StartTime = u64(14), u64(15), u64(16), u64(17), u64(22)
	st.RSSPages = int64(u64(24))
	return st, nil
}

// Cmdline reads the process's argv; empty for a zombie or a kernel
// thread.
func (fs FS) Cmdline(pid int) ([]string, error) {
	b, err := ReadFile(fs.path(pid, "cmdline"))
	if err != nil {
		return nil, err
	}
	return SplitCmdline(b), nil
}

// SplitCmdline splits a NUL-separated command line.
func SplitCmdline(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// ReadInto reads the start of /proc/PID/NAME into buf (a stack buffer
// for a file read every second).
func (fs FS) ReadInto(pid int, name string, buf []byte) (int, error) {
	return ReadSmall(fs.path(pid, name), buf)
}

// PSS reads the proportional share of memory from /proc/PID/smaps_rollup,
// into buf; false where the kernel does not let it be read (another
// user's process, an old kernel). The kernel walks the page tables to
// answer: it is the dearest read here.
func (fs FS) PSS(pid int, buf []byte) (int64, bool) {
	n, err := fs.ReadInto(pid, "smaps_rollup", buf)
	if err != nil {
		return 0, false
	}
	b := buf[:n]
	i := bytes.Index(b, []byte("\nPss:"))
	if i < 0 {
		return 0, false
	}
	line := b[i+len("\nPss:"):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	f := bytes.Fields(line)
	if len(f) != 2 || string(f[1]) != "kB" {
		return 0, false
	}
	kb, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil {
		return 0, false
	}
	return kb * 1024, true
}

// ReadBytes is how many bytes the process has read, from any descriptor
// (/proc/PID/io rchar); only our own user's processes can be read.
func (fs FS) ReadBytes(pid int) (uint64, error) {
	var buf [256]byte
	n, err := ReadSmall(fs.path(pid, "io"), buf[:])
	if err != nil {
		return 0, err
	}
	b := buf[:n]
	if !bytes.HasPrefix(b, []byte("rchar:")) {
		return 0, ErrMalformed
	}
	line, _, _ := bytes.Cut(b[len("rchar:"):], []byte{'\n'})
	v, err := strconv.ParseUint(string(bytes.TrimSpace(line)), 10, 64)
	if err != nil {
		return 0, ErrMalformed
	}
	return v, nil
}

// Comm reads the command name.
func (fs FS) Comm(pid int) (string, error) {
	var buf [64]byte
	n, err := ReadSmall(fs.path(pid, "comm"), buf[:])
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(buf[:n]), "\n"), nil
}

// Exe reads the path of the process's executable (" (deleted)" kept when
// the file was replaced).
func (fs FS) Exe(pid int) (string, error) { return os.Readlink(fs.path(pid, "exe")) }

// Cwd reads the process's working directory.
func (fs FS) Cwd(pid int) (string, error) { return os.Readlink(fs.path(pid, "cwd")) }

// Environ returns the value of key in the environment the process was
// started with (later setenv calls inside it do not show), "" when unset.
func (fs FS) Environ(pid int, key string) (string, error) {
	b, err := ReadFile(fs.path(pid, "environ"))
	if err != nil {
		return "", err
	}
	prefix := []byte(key + "=")
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v), nil
		}
	}
	return "", nil
}

// OpenFiles returns the absolute paths the process's descriptors name
// (sockets, pipes and anonymous files left out).
func (fs FS) OpenFiles(pid int) ([]string, error) {
	dir := fs.path(pid, "fd")
	names, err := ReadDirNames(dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if t, err := os.Readlink(dir + "/" + n); err == nil && strings.HasPrefix(t, "/") {
			out = append(out, t)
		}
	}
	return out, nil
}

// Children returns the direct children of pid, from
// /proc/PID/task/*/children, or, where the kernel lacks that file, from a
// scan of every process's parent.
func (fs FS) Children(pid int) ([]int, error) {
	tasks, err := ReadDirNames(fs.path(pid, "task"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, t := range tasks {
		b, err := ReadFile(fs.path(pid, "task/"+t+"/children"))
		if errors.Is(err, os.ErrNotExist) {
			return fs.scanChildren(pid)
		}
		if err != nil {
			continue // the task ended
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

func (fs FS) scanChildren(pid int) ([]int, error) {
	var out []int
	err := fs.Each(func(st Stat) {
		if st.PPID == pid {
			out = append(out, st.PID)
		}
	})
	return out, err
}

// Tree returns root and its descendants, shallowest first, at most max of
// them.
func (fs FS) Tree(root, max int) []int {
	out := []int{root}
	for i := 0; i < len(out) && len(out) < max; i++ {
		kids, _ := fs.Children(out[i])
		for _, c := range kids {
			if len(out) < max {
				out = append(out, c)
			}
		}
	}
	return out
}

// PIDs lists the processes of the mount.
func (fs FS) PIDs() ([]int, error) {
	names, err := ReadDirNames(fs.root())
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out, nil
}

// Each calls fn with the stat of every process, in one walk; processes
// that end meanwhile are left out.
func (fs FS) Each(fn func(Stat)) error {
	pids, err := fs.PIDs()
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if st, err := fs.Stat(pid); err == nil {
			fn(st)
		}
	}
	return nil
}

// ReadSmall reads the start of a small file into buf, with plain system
// calls.
func ReadSmall(path string, buf []byte) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, &os.PathError{Op: "read", Path: path, Err: err}
		}
		return n, nil
	}
}

// ReadFile reads a whole /proc file, which reports no size.
func ReadFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// ReadDirNames lists a directory's entries with plain system calls.
func ReadDirNames(dir string) ([]string, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}
