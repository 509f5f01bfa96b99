// Package all registers every built-in transcript provider, the way restic's
// backend/all does: consumers (history, stats, replay, the daemon's watcher)
// import this package instead of each provider.
package all

import (
	"github.com/musterhq/muster/internal/provider/claude"
	"github.com/musterhq/muster/internal/provider/codex"
	"github.com/musterhq/muster/internal/provider/cursor"
	"github.com/musterhq/muster/internal/provider/gemini"
	"github.com/musterhq/muster/internal/provider/muse"
	"github.com/musterhq/muster/internal/provider/opencode"
	"github.com/musterhq/muster/internal/transcript"
)

// Sources returns one transcript source per built-in provider, in a stable
// order (the order `muster history` discovers them in).
func Sources() []transcript.Source {
	return []transcript.Source{
		claude.New(),
		codex.New(),
		cursor.New(),
		gemini.New(),
		muse.New(),
		opencode.New(),
	}
}

// Names returns the provider names of Sources.
func Names() []string {
	var out []string
	for _, s := range Sources() {
		out = append(out, s.Provider())
	}
	return out
}

// Source returns the source named name, or nil when there is none.
func Source(name string) transcript.Source {
	for _, s := range Sources() {
		if s.Provider() == name {
			return s
		}
	}
	return nil
}
