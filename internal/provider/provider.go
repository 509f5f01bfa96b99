// Package provider is the vocabulary between Muster and the agent CLIs it
// runs. A provider is one package, internal/provider/<name>, whose value
// implements Provider and any of the optional capabilities below;
// internal/provider/all registers it. The rest of Muster asks the registry
// for a capability and never names a provider: adding one is a new package
// and a line in all. This package knows no provider; it also holds the two
// pseudo-providers, a plain shell and a user-defined command.
package provider

import (
	"github.com/google/uuid"

	"github.com/musterhq/muster/internal/termsignal"
	"github.com/musterhq/muster/internal/transcript"
)

// Provider is one agent CLI. Name is its stable name: the argument of
// `muster new`, the provider field of events and session records, and the
// name in history.
type Provider interface {
	Name() string
}

// Launcher is a provider Muster can start and resume in a pane.
type Launcher interface {
	Provider
	Launch() Launch
}

// Launch is one provider's launch behaviour.
type Launch struct {
	// Executables are tried in order on PATH.
	Executables []string
	// AssignsID reports whether the CLI accepts a caller-assigned id for a
	// new session; Muster then generates one (NewID) that stays provisional
	// until a capture confirms it.
	AssignsID bool
	// NewArgs builds the arguments (after the executable) of a new session;
	// assigned is empty unless AssignsID.
	NewArgs func(assigned string) []string
	// ResumeArgs builds the arguments that resume the native session id.
	ResumeArgs func(nativeID string) []string
	// Install tells the user how to get the CLI.
	Install string
	// HookArgs, when set, are the arguments (inserted after the executable)
	// that make the CLI load settings, a document of its own settings
	// format holding Muster's hooks, besides its own settings: a session
	// Muster starts then reports even before `muster hooks setup`.
	HookArgs func(settings string) []string
}

// Transcripts is a provider whose conversations Muster reads: where its
// transcripts live and how to parse them.
type Transcripts interface {
	Provider
	Transcripts() transcript.Source
}

// TranscriptChecker is a provider that can tell whether it still has a
// conversation, so that resuming a deleted one is reported instead of
// attempted. nativeID is a plain id (no path separators or glob
// characters).
type TranscriptChecker interface {
	Provider
	HasTranscript(env transcript.Env, nativeID string) bool
}

// NewID generates a caller-assigned session id in the form the providers
// that accept one want (a UUID for both Claude Code and Gemini CLI).
func NewID() string { return uuid.NewString() }

// Pseudo-providers: a plain shell and a user-defined command.
const (
	Shell  = "shell"
	Custom = "custom"
)

// SessionRouter is a provider whose hooks may run in a process another pane
// started (Codex's shared app-server), so that an event's pane environment
// proves nothing: internal/hookroute finds its pane from the session id,
// with these hints. Its hook mapping says RoutedBySession.
type SessionRouter interface {
	Provider
	// IsAgentProcess reports whether a process (its command name, its
	// executable's path) is the provider's CLI.
	IsAgentProcess(comm, exe string) bool
	// SharedProcess reports whether a process of the CLI, by its argv,
	// serves the sessions of other panes too (Codex's app-server daemon,
	// which the first TUI to need it starts as its child): neither it nor
	// anything it runs is the pane's own agent, whatever pane it lives in.
	SharedProcess(argv []string) bool
	// SessionFile returns the file the CLI holds open while the session
	// runs (Codex's rollout); "" when there is none (yet).
	SessionFile(env transcript.Env, sessionID string) (string, error)
	// SessionInfo reads what routing needs from that file.
	SessionInfo(path string) (SessionInfo, error)
	// Resumes reports whether a pane launched with argv resumes sessionID.
	Resumes(argv []string, sessionID string) bool
}

// SessionInfo is what routing knows of a session from its file.
type SessionInfo struct {
	CWD string // the session's working directory; never empty
	// Interactive: a session the user started in the CLI's own interface,
	// not a batch run, a sub-agent or another client's thread; only those
	// are routed by working directory.
	Interactive bool
	// Originator and Source say what started it, for the refusal message.
	Originator, Source string
}

// SignalReader is a provider whose CLI reports in terminal signals what its
// hooks do not.
type SignalReader interface {
	Provider
	// TurnFailed reports whether sig proves that the current turn failed.
	TurnFailed(sig termsignal.Signal) bool
}
