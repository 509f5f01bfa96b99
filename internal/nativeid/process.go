package nativeid

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/musterhq/muster/internal/procfs"
)

// Process-tree errors.
var (
	// ErrBadPID means a process id is not a positive number.
	ErrBadPID = errors.New("invalid process id")
	// ErrProcessGone means the process named by --process-id does not exist
	// (or its parent cannot be read).
	ErrProcessGone = errors.New("process not found")
	// ErrParentMismatch means --parent-process-id is not the real parent of
	// --process-id: the claim is stale or wrong.
	ErrParentMismatch = errors.New("parent process id does not match")
	// ErrNestedProcess means the provider process is inside the pane but not
	// its first-class agent: typically an agent started by the agent, which
	// inherited the pane's environment.
	ErrNestedProcess = errors.New("provider process is nested below the pane's agent")
	// ErrNotInPane means the provider process does not descend from the
	// pane's root process at all.
	ErrNotInPane = errors.New("provider process is not in the pane")
)

// ProcessTree answers questions about live processes.
type ProcessTree interface {
	// ParentOf returns the parent process id of pid.
	ParentOf(pid int) (int, error)
}

// ExecutableNamer is optionally implemented by a ProcessTree. CheckProcess
// uses it to recognize launcher wrappers (see LauncherRuntime); without it
// no process is a wrapper.
type ExecutableNamer interface {
	// Executable returns the base name of pid's executable, e.g. "node".
	Executable(pid int) (string, error)
}

// LauncherRuntime reports whether an executable base name is a script
// runtime whose process may be a launcher wrapper that starts the real
// provider process as its direct child: the npm shim of Codex (node →
// native codex), Gemini CLI's relaunch of itself (node → node) and the npm
// shim of OpenCode (node → bun-compiled binary) all do this.
func LauncherRuntime(exe string) bool {
	switch exe {
	case "node", "nodejs", "bun", "deno", "python", "python3":
		return true
	}
	return strings.HasPrefix(exe, "python3.")
}

// maxDepth bounds the ancestor walk used only to word an error.
const maxDepth = 64

// CheckProcess decides whether the provider process pid may set the native
// id of the session hosted by the pane whose root process is paneRootPID.
// pid is what the hook passed as --process-id: "$PPID" in a shell hook run by
// `sh -c`, which is the provider process that ran the hook, or process.pid in
// a Node plugin. ppid is --parent-process-id, 0 when absent.
//
// The rule, exactly:
//
//  1. pid and paneRootPID must be positive and pid must exist. A claimed
//     ppid (> 0) must equal pid's real parent.
//  2. The agent process A is pid itself, or pid's parent when that parent is
//     a launcher wrapper: its executable is a script runtime
//     (LauncherRuntime) and the tree implements ExecutableNamer. Wrappers
//     are recognized only directly above pid, one level.
//  3. agentIsRoot (the pane was launched with the agent as its process):
//     accepted iff A is the pane root.
//  4. Otherwise (the pane root is the user's managed shell): accepted iff A
//     is the pane root or a direct child of it.
//
// Everything deeper is rejected with ErrNestedProcess, a process outside the
// pane with ErrNotInPane. The ids are the hook's claims, not proof: the rule
// keeps an honest nested agent (one that inherited MUSTER_AGENT_SESSION_ID
// and runs the same hooks) from replacing its parent's conversation; it is
// not a security boundary. Known gap: an agent that is itself run by a
// script runtime without a wrapper can start a same-provider agent whose
// process is its direct child (exec'd through `sh -c`), and that child is
// accepted. The daemon should therefore not set GEMINI_CLI_NO_RELAUNCH, so
// that Gemini CLI keeps its wrapper.
func CheckProcess(tree ProcessTree, paneRootPID, pid, ppid int, agentIsRoot bool) error {
	if pid <= 0 {
		return fmt.Errorf("check process: %w %d", ErrBadPID, pid)
	}
	if paneRootPID <= 0 {
		return fmt.Errorf("check process: %w %d for the pane", ErrBadPID, paneRootPID)
	}
	if ppid < 0 {
		return fmt.Errorf("check process: %w %d for the parent", ErrBadPID, ppid)
	}
	parent, err := tree.ParentOf(pid)
	if err != nil {
		return fmt.Errorf("check process %d: %w: %v", pid, ErrProcessGone, err)
	}
	if ppid > 0 && ppid != parent {
		return fmt.Errorf("check process %d: %w: claimed %d, real %d", pid, ErrParentMismatch, ppid, parent)
	}
	agent := pid
	if pid != paneRootPID && parent > 1 && isWrapper(tree, parent) {
		agent = parent
	}
	if agent == paneRootPID {
		return nil
	}
	if !agentIsRoot {
		if agent == pid && parent == paneRootPID {
			return nil
		}
		if agent != pid {
			if gp, err := tree.ParentOf(agent); err == nil && gp == paneRootPID {
				return nil
			}
		}
	}
	depth := depthBelow(tree, pid, paneRootPID)
	if depth < 0 {
		return fmt.Errorf("check process %d: %w (pane root %d)", pid, ErrNotInPane, paneRootPID)
	}
	what := "the pane's agent"
	if !agentIsRoot {
		what = "the pane's shell"
	}
	return fmt.Errorf("check process %d: %w (%d levels below %s, process %d)", pid, ErrNestedProcess, depth, what, paneRootPID)
}

func isWrapper(tree ProcessTree, pid int) bool {
	n, ok := tree.(ExecutableNamer)
	if !ok {
		return false
	}
	exe, err := n.Executable(pid)
	return err == nil && LauncherRuntime(exe)
}

// depthBelow returns how many parent steps lead from pid to root, or -1.
func depthBelow(tree ProcessTree, pid, root int) int {
	for d := 0; d < maxDepth && pid > 1; d++ {
		if pid == root {
			return d
		}
		p, err := tree.ParentOf(pid)
		if err != nil || p == pid {
			return -1
		}
		pid = p
	}
	if pid == root {
		return maxDepth
	}
	return -1
}

// ProcFS is the Linux ProcessTree, read from a procfs mount.
type ProcFS struct {
	// Dir is the procfs mount point; empty means "/proc".
	Dir string
}

// ParentOf reads the parent id of pid (internal/procfs).
func (p ProcFS) ParentOf(pid int) (int, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("parent of %d: %w", pid, ErrBadPID)
	}
	st, err := procfs.FS{Root: p.Dir}.Stat(pid)
	if err != nil {
		return 0, fmt.Errorf("parent of %d: %w", pid, err)
	}
	return st.PPID, nil
}

// Executable returns the base name of pid's executable, or, when that
// link cannot be read, its command name.
func (p ProcFS) Executable(pid int) (string, error) {
	if pid <= 0 {
		return "", fmt.Errorf("executable of %d: %w", pid, ErrBadPID)
	}
	fs := procfs.FS{Root: p.Dir}
	if target, err := fs.Exe(pid); err == nil {
		return filepath.Base(strings.TrimSuffix(target, " (deleted)")), nil
	}
	st, err := fs.Stat(pid)
	if err != nil {
		return "", fmt.Errorf("executable of %d: %w", pid, err)
	}
	return st.Comm, nil
}
