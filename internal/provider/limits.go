package provider

import (
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// LimitReader is a provider that can tell a turn which failed because the
// user reached the provider's usage or rate limit from any other failure,
// by the failure's evidence (the message of the event that ended the run:
// a hook payload's error and text, a transcript record).
type LimitReader interface {
	Provider
	// ReadLimit reports whether failure (the message of the failed event,
	// which occurred at at) says the agent stopped at its limit, and when
	// the limit resets if it says so (zero when not).
	ReadLimit(failure string, at time.Time) (resetsAt time.Time, ok bool)
	// ContinuePrompt is what to type (then Enter) for the agent to go on
	// once the limit reset.
	ContinuePrompt() string
}

// LimitFinder is a LimitReader whose CLI tells that it stopped at its limit
// somewhere other than the event its run ended with: in its transcript
// (Codex records the limit in its rollout and fires no hook), or, as a last
// resort, on its screen (Gemini CLI holds the turn at a limit dialog, the
// run still open).
type LimitFinder interface {
	LimitReader
	// FindLimit looks for the limit the run described by q stopped at.
	FindLimit(q LimitQuery) (Limit, bool)
	// Continue returns what to type for the agent to go on once its limit
	// reset, read from its screen then: keys to press first (a dialog to
	// close; "" for none), then text to type, then Enter. An empty text
	// with Enter presses Enter alone (the CLI's own "try again").
	Continue(screen string) (keys, text string)
}

// LimitQuery is what the daemon knows of a run when it asks a LimitFinder.
type LimitQuery struct {
	Env      transcript.Env
	NativeID string // the CLI's session id; "" when none was captured
	// At is when the run stopped (its failure), or now for a run still
	// open (Open).
	At   time.Time
	Open bool
	// Screen returns the pane's screen text now ("" when it cannot); it
	// captures on each call, so call it only when needed.
	Screen func() string
}

// Limit is a limit a LimitFinder found.
type Limit struct {
	ResetsAt time.Time // zero when the CLI did not say
	// Evidence names where it was read ("rollout task_complete …",
	// "screen: …"), for explain.
	Evidence string
	Message  string // the CLI's own words
	// Retrying says the CLI is still sending the request again by itself
	// (Claude Code's retry line): its run will end with a failure of its
	// own, so the daemon raises no item for the limit until then, and
	// keeps the finding when a later look misses it between two attempts.
	Retrying bool
}
