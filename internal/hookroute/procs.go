package hookroute

import (
	"fmt"

	"github.com/musterhq/muster/internal/procfs"
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
	// PIDs lists every process.
	PIDs() ([]int, error)
	// Environ returns the value of key in pid's initial environment, ""
	// when unset.
	Environ(pid int, key string) (string, error)
}

// ProcFS is Procs over a Linux /proc file system (internal/procfs).
type ProcFS struct {
	Root string // "/proc" when empty
}

func (p ProcFS) fs() procfs.FS { return procfs.FS{Root: p.Root} }

// Children returns pid's direct children.
func (p ProcFS) Children(pid int) ([]int, error) {
	kids, err := p.fs().Children(pid)
	if err != nil {
		return nil, fmt.Errorf("list children of %d: %w", pid, err)
	}
	return kids, nil
}

// Name reads the command name and the executable's path.
func (p ProcFS) Name(pid int) (string, string, error) {
	comm, err := p.fs().Comm(pid)
	if err != nil {
		return "", "", fmt.Errorf("read name of %d: %w", pid, err)
	}
	exe, _ := p.fs().Exe(pid)
	return comm, exe, nil
}

// Cwd reads the working directory.
func (p ProcFS) Cwd(pid int) (string, error) {
	d, err := p.fs().Cwd(pid)
	if err != nil {
		return "", fmt.Errorf("read cwd of %d: %w", pid, err)
	}
	return d, nil
}

// OpenFiles lists the files pid holds open.
func (p ProcFS) OpenFiles(pid int) ([]string, error) {
	files, err := p.fs().OpenFiles(pid)
	if err != nil {
		return nil, fmt.Errorf("list open files of %d: %w", pid, err)
	}
	return files, nil
}

// Cmdline reads pid's argv.
func (p ProcFS) Cmdline(pid int) ([]string, error) {
	argv, err := p.fs().Cmdline(pid)
	if err != nil {
		return nil, fmt.Errorf("read command line of %d: %w", pid, err)
	}
	return argv, nil
}

// PIDs lists every process.
func (p ProcFS) PIDs() ([]int, error) {
	pids, err := p.fs().PIDs()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	return pids, nil
}

// Environ reads one variable of pid's initial environment.
func (p ProcFS) Environ(pid int, key string) (string, error) {
	v, err := p.fs().Environ(pid, key)
	if err != nil {
		return "", fmt.Errorf("read environment of %d: %w", pid, err)
	}
	return v, nil
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
