package all

import (
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all/hooks"
)

func TestRegistry(t *testing.T) {
	names := Names()
	if len(names) == 0 {
		t.Fatal("no providers registered")
	}
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || seen[n] {
			t.Errorf("provider name %q is empty or registered twice", n)
		}
		seen[n] = true
		if s := Source(n); s == nil || s.Provider() != n {
			t.Errorf("Source(%q) = %v", n, s)
		}
	}
	if Source("no-such-provider") != nil {
		t.Error("Source of an unknown name is not nil")
	}
	for _, want := range []string{"claude", "codex", "cursor", "gemini", "muse", "opencode"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not registered", want)
		}
	}
}

type testProvider struct{ name string }

func (p testProvider) Name() string { return p.name }

func TestRegister(t *testing.T) {
	p := testProvider{"registry-test"}
	unregister := Register(p)
	if got, ok := Lookup(p.name); !ok || got != p {
		t.Fatalf("Lookup(%q) = %v, %t after Register", p.name, got, ok)
	}
	if Valid(p.name) {
		t.Errorf("a provider without Launch is Valid for muster new")
	}
	unregister()
	if _, ok := Lookup(p.name); ok {
		t.Errorf("%q is still registered after unregister", p.name)
	}
	for _, name := range []string{"claude", "shell", "custom"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", name)
				}
			}()
			Register(testProvider{name})
		}()
	}
}

func TestLaunchers(t *testing.T) {
	names := LaunchNames()
	if !slices.Equal(names, []string{"claude", "codex", "cursor", "gemini", "opencode"}) {
		t.Errorf("LaunchNames() = %v", names)
	}
	for _, n := range names {
		l, ok := Launch(n)
		if !ok || len(l.Executables) == 0 || l.NewArgs == nil || l.ResumeArgs == nil || l.Install == "" {
			t.Errorf("Launch(%q) = %+v, %t", n, l, ok)
		}
		if !Valid(n) {
			t.Errorf("Valid(%q) = false", n)
		}
	}
	for _, n := range []string{"shell", "custom"} {
		if !Valid(n) {
			t.Errorf("Valid(%q) = false", n)
		}
	}
	if Valid("muse") || Valid("nope") {
		t.Error("Valid accepts a provider Muster cannot launch")
	}
	if err := UnknownError("nope"); err == nil || err.Error() != `unknown provider "nope" (known: [claude codex cursor gemini opencode custom])` {
		t.Errorf("UnknownError = %v", err)
	}
}

// TestHookRegistryAgrees: the hook helper's registry (all/hooks) holds
// exactly the mappings of the providers registered here.
func TestHookRegistryAgrees(t *testing.T) {
	var want []string
	for _, h := range Capable[provider.HookMapper]() {
		want = append(want, h.Name())
		m, ok := hooks.Lookup(h.Name())
		if !ok || m != h.HookMapping() || m.Provider != h.Name() {
			t.Errorf("hooks.Lookup(%q) = %v, %t; want the provider's own mapping", h.Name(), m, ok)
		}
		if _, ok := h.(provider.HookInstaller); !ok {
			t.Errorf("%s maps hooks but installs none", h.Name())
		}
		if _, routed := h.(provider.SessionRouter); routed != h.HookMapping().RoutedBySession {
			t.Errorf("%s: the hook helper's RoutedBySession is %t, but SessionRouter is %t", h.Name(), h.HookMapping().RoutedBySession, routed)
		}
	}
	got := hooks.Names()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("all/hooks registers %v; the providers with hook mappings are %v", got, want)
	}
}
