package codex

import (
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/codex/codexhook"
	"github.com/musterhq/muster/internal/provider/hookmap"
	"github.com/musterhq/muster/internal/transcript"
)

// Provider is the Codex CLI as Muster runs it; internal/provider/all
// registers it.
type Provider struct{}

var (
	_ provider.HookMapper        = Provider{}
	_ provider.Launcher          = Provider{}
	_ provider.Transcripts       = Provider{}
	_ provider.TranscriptChecker = Provider{}
)

// HookMapping implements provider.HookMapper.
func (Provider) HookMapping() *hookmap.Mapping { return &codexhook.Mapping }

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Launch implements provider.Launcher. Codex takes no caller-assigned id.
func (Provider) Launch() provider.Launch {
	return provider.Launch{
		// --no-daemon keeps hooks children of this pane's own codex process;
		// the shared daemon would run them with another pane's environment.
		Executables: []string{"codex"},
		NewArgs:     func(string) []string { return []string{"--no-daemon"} },
		// --no-daemon goes before the subcommand: `codex resume ID
		// --no-daemon` starts the shared daemon again (Codex 0.169).
		ResumeArgs: func(id string) []string { return []string{"--no-daemon", "resume", id} },
		Install:    "npm install -g @openai/codex",
	}
}

// Transcripts implements provider.Transcripts.
func (Provider) Transcripts() transcript.Source { return New() }

// HasTranscript implements provider.TranscriptChecker: the rollout named
// with the id, in a date folder or flat under sessions/.
func (Provider) HasTranscript(env transcript.Env, id string) bool {
	p, _ := FindRollout(env, id)
	return p != ""
}
