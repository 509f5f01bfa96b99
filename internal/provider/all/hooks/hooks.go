// Package hooks is the registry of hook payload mappings, the light half of
// internal/provider/all: the hook helper (cmd/muster-hook, on every hook of
// every agent) links it instead of all, which would bring the transcript
// parsers and SQLite along. Every provider with hooks is one line in
// builtin; all checks that both registries agree, and all.Register adds a
// test provider's mapping here too.
package hooks

import (
	"fmt"
	"slices"
	"sync"

	"github.com/musterhq/muster/internal/provider/claude/claudehook"
	"github.com/musterhq/muster/internal/provider/codex/codexhook"
	"github.com/musterhq/muster/internal/provider/cursor/cursorhook"
	"github.com/musterhq/muster/internal/provider/gemini/geminihook"
	"github.com/musterhq/muster/internal/provider/hookmap"
	"github.com/musterhq/muster/internal/provider/opencode/opencodehook"
)

// builtin lists the built-in mappings in display order.
var builtin = []*hookmap.Mapping{
	&claudehook.Mapping,
	&codexhook.Mapping,
	&geminihook.Mapping,
	&cursorhook.Mapping,
	&opencodehook.Mapping,
}

var (
	mu      sync.RWMutex
	current = builtin
)

// Register adds m (a test provider's) until the returned function is
// called. It panics when the name is taken.
func Register(m *hookmap.Mapping) (unregister func()) {
	mu.Lock()
	defer mu.Unlock()
	if _, ok := lookupLocked(m.Provider); ok {
		panic(fmt.Sprintf("hook mapping %q registered twice", m.Provider))
	}
	current = append(slices.Clip(current), m)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		current = slices.DeleteFunc(slices.Clone(current), func(q *hookmap.Mapping) bool { return q == m })
	}
}

// Mappings returns every registered mapping.
func Mappings() []*hookmap.Mapping {
	mu.RLock()
	defer mu.RUnlock()
	return current
}

// Lookup returns the mapping of provider.
func Lookup(provider string) (*hookmap.Mapping, bool) {
	mu.RLock()
	defer mu.RUnlock()
	return lookupLocked(provider)
}

func lookupLocked(provider string) (*hookmap.Mapping, bool) {
	for _, m := range current {
		if m.Provider == provider {
			return m, true
		}
	}
	return nil, false
}

// Names lists the providers with a mapping, in display order.
func Names() []string {
	var out []string
	for _, m := range Mappings() {
		out = append(out, m.Provider)
	}
	return out
}
