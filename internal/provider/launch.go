// Package provider describes how Muster launches and resumes each built-in
// agent CLI: executable names, new-session and resume commands, whether the
// CLI accepts a caller-assigned session id, and what to install when it is
// missing. Transcript parsing lives in the per-provider packages below it.
package provider

import (
	"fmt"
	"slices"
	"sort"

	"github.com/google/uuid"
)

// Launch is one provider's launch behaviour.
type Launch struct {
	Name string
	// Executables are tried in order on PATH.
	Executables []string
	// AssignsID reports whether the CLI accepts a caller-assigned id for a
	// new session; Muster then generates one that stays provisional until a
	// capture confirms it.
	AssignsID bool
	// NewArgs builds the arguments (after the executable) of a new session;
	// assigned is empty unless AssignsID.
	NewArgs func(assigned string) []string
	// ResumeArgs builds the arguments that resume the native session id.
	ResumeArgs func(nativeID string) []string
	// Install tells the user how to get the CLI.
	Install string
}

var launches = map[string]Launch{
	"claude": {
		Name: "claude", Executables: []string{"claude"}, AssignsID: true,
		NewArgs:    func(id string) []string { return []string{"--session-id", id} },
		ResumeArgs: func(id string) []string { return []string{"--resume", id} },
		Install:    "npm install -g @anthropic-ai/claude-code",
	},
	"codex": {
		// --no-daemon keeps hooks children of this pane's own codex process;
		// the shared daemon would run them with another pane's environment.
		Name: "codex", Executables: []string{"codex"},
		NewArgs: func(string) []string { return []string{"--no-daemon"} },
		// --no-daemon goes before the subcommand: `codex resume ID
		// --no-daemon` starts the shared daemon again (Codex 0.169).
		ResumeArgs: func(id string) []string { return []string{"--no-daemon", "resume", id} },
		Install:    "npm install -g @openai/codex",
	},
	"gemini": {
		Name: "gemini", Executables: []string{"gemini"}, AssignsID: true,
		NewArgs:    func(id string) []string { return []string{"--session-id", id} },
		ResumeArgs: func(id string) []string { return []string{"--resume", id} },
		Install:    "npm install -g @google/gemini-cli",
	},
	"cursor": {
		Name: "cursor", Executables: []string{"cursor-agent", "agent"},
		NewArgs:    func(string) []string { return nil },
		ResumeArgs: func(id string) []string { return []string{"--resume", id} },
		Install:    "curl https://cursor.com/install -fsS | bash",
	},
	"opencode": {
		Name: "opencode", Executables: []string{"opencode"},
		NewArgs:    func(string) []string { return nil },
		ResumeArgs: func(id string) []string { return []string{"--session", id} },
		Install:    "npm install -g opencode-ai",
	},
}

// Lookup returns a built-in provider's launch behaviour.
func Lookup(name string) (Launch, bool) {
	l, ok := launches[name]
	return l, ok
}

// Names lists the built-in launchable providers.
func Names() []string {
	var names []string
	for n := range launches {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewID generates a caller-assigned session id in the form the provider
// accepts (a UUID for both Claude Code and Gemini CLI).
func NewID() string { return uuid.NewString() }

// Pseudo-providers: a plain shell and a user-defined command.
const (
	Shell  = "shell"
	Custom = "custom"
)

// Valid reports whether name may be given to `muster new`.
func Valid(name string) bool {
	_, ok := launches[name]
	return ok || name == Shell || name == Custom
}

// UnknownError explains an unknown provider.
func UnknownError(name string) error {
	return fmt.Errorf("unknown provider %q (known: %v)", name, slices.Concat(Names(), []string{Custom}))
}
