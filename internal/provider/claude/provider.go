package claude

import (
	"path/filepath"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/claude/claudehook"
	"github.com/musterhq/muster/internal/provider/hookmap"
	"github.com/musterhq/muster/internal/transcript"
)

// Provider is Claude Code as Muster runs it; internal/provider/all
// registers it.
type Provider struct{}

var (
	_ provider.HookMapper        = Provider{}
	_ provider.Launcher          = Provider{}
	_ provider.Transcripts       = Provider{}
	_ provider.TranscriptChecker = Provider{}
	_ provider.LimitReader       = Provider{}
)

// HookMapping implements provider.HookMapper.
func (Provider) HookMapping() *hookmap.Mapping { return &claudehook.Mapping }

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Launch implements provider.Launcher.
func (Provider) Launch() provider.Launch {
	return provider.Launch{
		Executables: []string{"claude"}, AssignsID: true,
		NewArgs:    func(id string) []string { return []string{"--session-id", id} },
		ResumeArgs: func(id string) []string { return []string{"--resume", id} },
		Install:    "npm install -g @anthropic-ai/claude-code",
		HookArgs:   func(settings string) []string { return []string{"--settings", settings} },
	}
}

// Transcripts implements provider.Transcripts.
func (Provider) Transcripts() transcript.Source { return New() }

// HasTranscript implements provider.TranscriptChecker: projects/*/<id>.jsonl.
func (Provider) HasTranscript(env transcript.Env, id string) bool {
	m, _ := filepath.Glob(filepath.Join(ProjectsDir(env), "*", id+".jsonl"))
	return len(m) > 0
}
