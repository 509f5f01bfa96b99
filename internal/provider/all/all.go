// Package all is the registry of providers, the way restic's backend/all
// is: every built-in provider is one line in builtin, and the rest of
// Muster (the daemon, history, stats, replay, the CLI) asks this package for
// a provider's capabilities instead of importing the provider. Hook
// mappings are registered in the light subpackage hooks as well, for the
// hook helper; a test here checks that both agree. Tests may add a provider
// of their own with Register.
package all

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all/hooks"
	"github.com/musterhq/muster/internal/provider/claude"
	"github.com/musterhq/muster/internal/provider/codex"
	"github.com/musterhq/muster/internal/provider/cursor"
	"github.com/musterhq/muster/internal/provider/gemini"
	"github.com/musterhq/muster/internal/provider/muse"
	"github.com/musterhq/muster/internal/provider/opencode"
	"github.com/musterhq/muster/internal/transcript"
)

// builtin lists the built-in providers in a stable order (the order
// `muster history` discovers them in).
var builtin = []provider.Provider{
	claude.Provider{},
	codex.Provider{},
	cursor.Provider{},
	gemini.Provider{},
	muse.Provider{},
	opencode.Provider{},
}

var (
	mu      sync.RWMutex
	current = builtin
)

// Register adds p (a provider of a test) until the returned function is
// called, and its hook mapping to internal/provider/all/hooks. It panics
// when the name is taken: names are identities.
func Register(p provider.Provider) (unregister func()) {
	mu.Lock()
	defer mu.Unlock()
	if slices.ContainsFunc(current, func(q provider.Provider) bool { return q.Name() == p.Name() }) ||
		p.Name() == provider.Shell || p.Name() == provider.Custom {
		panic(fmt.Sprintf("provider %q registered twice", p.Name()))
	}
	unhook := func() {}
	if h, ok := p.(provider.HookMapper); ok {
		unhook = hooks.Register(h.HookMapping())
	}
	current = append(slices.Clip(current), p)
	return func() {
		unhook()
		mu.Lock()
		defer mu.Unlock()
		current = slices.DeleteFunc(slices.Clone(current), func(q provider.Provider) bool { return q == p })
	}
}

// Providers returns every registered provider.
func Providers() []provider.Provider {
	mu.RLock()
	defer mu.RUnlock()
	return current
}

// Lookup returns the provider named name.
func Lookup(name string) (provider.Provider, bool) {
	for _, p := range Providers() {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// Capable returns the providers with capability C (one of the interfaces of
// package provider), in registry order.
func Capable[C provider.Provider]() []C {
	var out []C
	for _, p := range Providers() {
		if c, ok := p.(C); ok {
			out = append(out, c)
		}
	}
	return out
}

// As returns provider name's capability C.
func As[C provider.Provider](name string) (C, bool) {
	p, ok := Lookup(name)
	if !ok {
		var zero C
		return zero, false
	}
	c, ok := p.(C)
	return c, ok
}

// Launch returns the launch behaviour of a provider Muster can start.
func Launch(name string) (provider.Launch, bool) {
	if l, ok := As[provider.Launcher](name); ok {
		return l.Launch(), true
	}
	return provider.Launch{}, false
}

// LaunchNames lists the providers Muster can start, sorted.
func LaunchNames() []string {
	var names []string
	for _, l := range Capable[provider.Launcher]() {
		names = append(names, l.Name())
	}
	sort.Strings(names)
	return names
}

// Valid reports whether name may be given to `muster new`.
func Valid(name string) bool {
	_, ok := As[provider.Launcher](name)
	return ok || name == provider.Shell || name == provider.Custom
}

// UnknownError explains a name Valid refuses.
func UnknownError(name string) error {
	return fmt.Errorf("unknown provider %q (known: %v)", name, slices.Concat(LaunchNames(), []string{provider.Custom}))
}

// Sources returns one transcript source per provider that has transcripts,
// in registry order.
func Sources() []transcript.Source {
	var out []transcript.Source
	for _, t := range Capable[provider.Transcripts]() {
		out = append(out, t.Transcripts())
	}
	return out
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
	if t, ok := As[provider.Transcripts](name); ok {
		return t.Transcripts()
	}
	return nil
}
