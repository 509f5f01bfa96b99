package hookroute

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Procs inspects processes. The Linux implementation reads /proc; tests may
// substitute their own.
type Procs interface {
	// Children returns the direct children of pid.
	Children(pid int) ([]int, error)
	// Name returns the command name and the executable's path (either may be
	// empty when unreadable).
	Name(pid int) (comm, exe string, err error)
	// Cwd returns the working directory of pid.
	Cwd(pid int) (string, error)
	// OpenFiles returns the paths of pid's open file descriptors.
	OpenFiles(pid int) ([]string, error)
	// Cmdline returns pid's argv.
	Cmdline(pid int) ([]string, error)
}

// ProcFS is Procs over a Linux /proc file system.
type ProcFS struct {
	Root string // "/proc" when empty
}

func (p ProcFS) root() string {
	if p.Root == "" {
		return "/proc"
	}
	return p.Root
}

func (p ProcFS) path(pid int, parts ...string) string {
	return filepath.Join(append([]string{p.root(), strconv.Itoa(pid)}, parts...)...)
}

// Children reads /proc/PID/task/*/children, falling back to a scan of every
// process's parent when the kernel lacks that file.
func (p ProcFS) Children(pid int) ([]int, error) {
	tasks, err := readDirNames(p.path(pid, "task"))
	if err != nil {
		return nil, fmt.Errorf("list children of %d: %w", pid, err)
	}
	var out []int
	for _, t := range tasks {
		b, err := readProcFile(p.path(pid, "task", t, "children"))
		if errors.Is(err, os.ErrNotExist) {
			return p.scanChildren(pid)
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

func (p ProcFS) scanChildren(pid int) ([]int, error) {
	ents, err := os.ReadDir(p.root())
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []int
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := readProcFile(p.path(c, "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 2 {
			if pp, err := strconv.Atoi(f[1]); err == nil && pp == pid {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// Name reads /proc/PID/comm and /proc/PID/exe.
func (p ProcFS) Name(pid int) (string, string, error) {
	b, err := readProcFile(p.path(pid, "comm"))
	if err != nil {
		return "", "", fmt.Errorf("read name of %d: %w", pid, err)
	}
	exe, _ := os.Readlink(p.path(pid, "exe"))
	return strings.TrimSpace(string(b)), exe, nil
}

// Cwd reads /proc/PID/cwd.
func (p ProcFS) Cwd(pid int) (string, error) {
	d, err := os.Readlink(p.path(pid, "cwd"))
	if err != nil {
		return "", fmt.Errorf("read cwd of %d: %w", pid, err)
	}
	return d, nil
}

// OpenFiles reads the links in /proc/PID/fd.
func (p ProcFS) OpenFiles(pid int) ([]string, error) {
	dir := p.path(pid, "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list open files of %d: %w", pid, err)
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		if t, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(t, "/") {
			out = append(out, t)
		}
	}
	return out, nil
}

// Cmdline reads /proc/PID/cmdline.
func (p ProcFS) Cmdline(pid int) ([]string, error) {
	b, err := readProcFile(p.path(pid, "cmdline"))
	if err != nil {
		return nil, fmt.Errorf("read command line of %d: %w", pid, err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

// The daemon walks every pane's process tree every few seconds
// (Leftovers.Watch), so /proc is read with plain system calls: os.ReadFile
// and os.ReadDir also stat the file and try to register it with the
// network poller, twice the calls, and they were a third of an idle
// daemon's CPU with 50 panes.

// readProcFile reads a whole /proc file, which reports no size.
func readProcFile(path string) ([]byte, error) {
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

// readDirNames lists a directory's entries but . and ..
func readDirNames(path string) ([]string, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var names []string
	var buf [4096]byte
	for {
		n, err := unix.ReadDirent(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "readdirent", Path: path, Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// maxTree bounds the processes examined under one pane.
const maxTree = 512

// AgentPIDs returns the processes in the tree rooted at root (root
// included) that the router's provider counts as the pane's own agent,
// shallowest first. A shared process (provider.SessionRouter.SharedProcess)
// and everything below it are left out: they serve other panes as well.
func AgentPIDs(procs Procs, root int, p AgentMatcher) []int {
	own, _ := walk(procs, root, p)
	return own
}

// SharedPIDs returns the shared processes of the provider in the tree
// rooted at root (their descendants excluded), shallowest first.
func SharedPIDs(procs Procs, root int, p AgentMatcher) []int {
	_, shared := walk(procs, root, p)
	return shared
}

// AgentMatcher is what the tree walk asks of a provider: the
// process-recognizing part of provider.SessionRouter.
type AgentMatcher interface {
	IsAgentProcess(comm, exe string) bool
	SharedProcess(argv []string) bool
}

func walk(procs Procs, root int, p AgentMatcher) (own, shared []int) {
	if root <= 0 {
		return nil, nil
	}
	queue := []int{root}
	seen := map[int]bool{}
	for len(queue) > 0 && len(seen) < maxTree {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if comm, exe, err := procs.Name(pid); err == nil && p.IsAgentProcess(comm, exe) {
			if argv, err := procs.Cmdline(pid); err == nil && p.SharedProcess(argv) {
				shared = append(shared, pid)
				continue
			}
			own = append(own, pid)
		}
		kids, _ := procs.Children(pid)
		queue = append(queue, kids...)
	}
	return own, shared
}
