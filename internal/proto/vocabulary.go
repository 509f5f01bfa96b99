package proto

import (
	"fmt"
	"strconv"
)

// The words a session is described with, the same in `muster ls`, the
// dashboard, the web pages and --json (README, "Words"). A session has
// three things that can be said of it, each its own word and column:
//
//   - its pane: PaneLive (a process runs in it), PaneExited (the process
//     ended; the final screen is kept) or PaneRestorable (the daemon
//     stopped under it; `muster resume` continues the conversation);
//   - its run, what the agent's current or last turn is (RunState):
//     running, waitingInput, waitingApproval, succeeded, failed,
//     interrupted, disconnected, idle, limited (stopped at the provider's
//     usage limit), or none before the first;
//   - its activity, what the terminal alone says the program is doing:
//     working, waiting, attention, or none.
//
// StatusWord is the one word for a session where there is room for one (a
// phone's list, `wait`): the pane's when it is not live, else the run's,
// else "live". AGE is always the time since the session was created.

// Pane words (SessionInfo.Pane, WaitSession.Pane).
const (
	PaneLive       = "live"
	PaneExited     = "exited"
	PaneRestorable = "restorable"
)

// PaneRunning is the older word for a live pane: SessionInfo.State
// still says "running" for scripts written against it.
const PaneRunning = "running"

// PaneWord is the pane word for a SessionInfo.State.
func PaneWord(state string) string {
	if state == PaneRunning {
		return PaneLive
	}
	return state
}

// StatusWord is the one word for s: its pane when not live, else its run,
// else "live".
func (s SessionInfo) StatusWord() string {
	if p := PaneWord(s.State); p != PaneLive {
		return p
	}
	if s.RunState != nil && *s.RunState != "" {
		return *s.RunState
	}
	return PaneLive
}

// StatusLabel is StatusWord as ls and the dashboard print it: an exited
// pane with its exit code.
func (s SessionInfo) StatusLabel() string {
	w := s.StatusWord()
	if w == PaneExited && s.ExitCode != nil {
		return w + " " + strconv.Itoa(*s.ExitCode)
	}
	return w
}

// BranchMark is a session's worktree as ls, the dashboard and the web
// page show it: its branch, "*" when the tree has changed or untracked
// files, and ↑N for its N commits since its base. The branch is as git
// named it: a caller sanitizes the mark for its medium.
func (w WorktreeInfo) BranchMark() string {
	out := w.Branch
	if w.Dirty > 0 {
		out += "*"
	}
	if w.Ahead > 0 {
		out += fmt.Sprintf(" ↑%d", w.Ahead)
	}
	return out
}
