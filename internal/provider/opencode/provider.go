package opencode

import (
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/hookmap"
	"github.com/musterhq/muster/internal/provider/opencode/opencodehook"
	"github.com/musterhq/muster/internal/transcript"
)

// Provider is OpenCode as Muster runs it; internal/provider/all registers
// it.
type Provider struct{}

var (
	_ provider.HookMapper  = Provider{}
	_ provider.Launcher    = Provider{}
	_ provider.Transcripts = Provider{}
)

// HookMapping implements provider.HookMapper.
func (Provider) HookMapping() *hookmap.Mapping { return &opencodehook.Mapping }

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Launch implements provider.Launcher.
func (Provider) Launch() provider.Launch {
	return provider.Launch{
		Executables: []string{"opencode"},
		NewArgs:     func(string) []string { return nil },
		ResumeArgs:  func(id string) []string { return []string{"--session", id} },
		Install:     "npm install -g opencode-ai",
	}
}

// Transcripts implements provider.Transcripts.
func (Provider) Transcripts() transcript.Source { return New() }
