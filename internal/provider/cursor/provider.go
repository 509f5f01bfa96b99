package cursor

import (
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/cursor/cursorhook"
	"github.com/musterhq/muster/internal/provider/hookmap"
	"github.com/musterhq/muster/internal/transcript"
)

// Provider is the Cursor CLI as Muster runs it; internal/provider/all
// registers it.
type Provider struct{}

var (
	_ provider.HookMapper  = Provider{}
	_ provider.Launcher    = Provider{}
	_ provider.Transcripts = Provider{}
)

// HookMapping implements provider.HookMapper.
func (Provider) HookMapping() *hookmap.Mapping { return &cursorhook.Mapping }

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Launch implements provider.Launcher. The CLI installs itself as
// cursor-agent, and newer builds as agent.
func (Provider) Launch() provider.Launch {
	return provider.Launch{
		Executables: []string{"cursor-agent", "agent"},
		NewArgs:     func(string) []string { return nil },
		ResumeArgs:  func(id string) []string { return []string{"--resume", id} },
		Install:     "curl https://cursor.com/install -fsS | bash",
	}
}

// Transcripts implements provider.Transcripts.
func (Provider) Transcripts() transcript.Source { return New() }
