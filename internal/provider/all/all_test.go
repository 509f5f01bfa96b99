package all

import (
	"slices"
	"testing"
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
