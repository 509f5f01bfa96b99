package provider

import "github.com/musterhq/muster/internal/transcript"

// ProcessSessionReader is a provider whose running CLI says, per process,
// which session it is in: the proof internal/native needs to follow a
// pane's transcript when no hook captured the session id (two hook-less
// agents in one directory are otherwise told apart by nothing).
type ProcessSessionReader interface {
	Provider
	// ProcessSession returns the session id that process pid, a process of
	// the CLI, is in; "" when pid says nothing (another program, no
	// record yet, or a platform without the means to ask). It must be
	// cheap: a few small reads.
	ProcessSession(env transcript.Env, pid int) string
}
