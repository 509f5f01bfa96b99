package gemini

import (
	"path/filepath"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/gemini/geminihook"
	"github.com/musterhq/muster/internal/provider/hookmap"
	"github.com/musterhq/muster/internal/transcript"
)

// Provider is Gemini CLI as Muster runs it; internal/provider/all
// registers it.
type Provider struct{}

var (
	_ provider.HookMapper        = Provider{}
	_ provider.Launcher          = Provider{}
	_ provider.Transcripts       = Provider{}
	_ provider.TranscriptChecker = Provider{}
)

// HookMapping implements provider.HookMapper.
func (Provider) HookMapping() *hookmap.Mapping { return &geminihook.Mapping }

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Launch implements provider.Launcher.
func (Provider) Launch() provider.Launch {
	return provider.Launch{
		Executables: []string{"gemini"}, AssignsID: true,
		NewArgs:    func(id string) []string { return []string{"--session-id", id} },
		ResumeArgs: func(id string) []string { return []string{"--resume", id} },
		Install:    "npm install -g @google/gemini-cli",
	}
}

// Transcripts implements provider.Transcripts.
func (Provider) Transcripts() transcript.Source { return New() }

// HasTranscript implements provider.TranscriptChecker: the chat files
// carry the first 8 characters of the id, tmp/*/chats/session-*<short>*.
func (Provider) HasTranscript(env transcript.Env, id string) bool {
	short := id[:min(len(id), 8)]
	m, _ := filepath.Glob(filepath.Join(Dir(env), "tmp", "*", "chats", "session-*"+short+"*"))
	return len(m) > 0
}
