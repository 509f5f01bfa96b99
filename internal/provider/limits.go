package provider

import "time"

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
