package provider

import (
	"context"
	"time"
)

// BackgroundLister is a provider whose CLI runs agents under a supervisor
// of its own, outside any terminal Muster owns (Claude Code's `claude
// --bg`, listed by `claude agents`): Muster lists them beside its panes,
// marked as external, and opens one in a pane with the CLI's own attach.
type BackgroundLister interface {
	Provider
	// BackgroundAgents lists the agents the CLI's supervisor runs for the
	// user whose environment env is (KEY=VALUE; HOME, PATH and the CLI's
	// own variables). None, and no error, when the CLI is not installed or
	// has never run one.
	BackgroundAgents(ctx context.Context, env []string) ([]BackgroundAgent, error)
	// MayHaveBackgroundAgents reports, without running the CLI, whether
	// BackgroundAgents could list any for env: a host's daemon says so,
	// so that a listing relayed from it (which has no CLI to run) is
	// taken through the host's own muster instead.
	MayHaveBackgroundAgents(env []string) bool
}

// BackgroundAgent is one agent a CLI's supervisor runs.
type BackgroundAgent struct {
	ID        string // the supervisor's id for it (what its attach takes)
	SessionID string // its conversation's native id
	Name      string
	CWD       string
	PID       int
	StartedAt time.Time
	Status    string // the CLI's word for the process: busy, idle, …
	State     string // the CLI's word for the agent: working, blocked, …
	// Attach is the command line that opens it in a terminal, joining the
	// agent that runs rather than starting a second one on its
	// conversation.
	Attach []string
}
