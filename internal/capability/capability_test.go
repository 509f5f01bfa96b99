package capability

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestNewTokenEntropyAndForm(t *testing.T) {
	seen := map[string]bool{}
	for range 64 {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) != TokenLen {
			t.Fatalf("token length %d, want %d", len(tok), TokenLen)
		}
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			t.Fatalf("token %q is not base64url: %v", tok, err)
		}
		if len(raw)*8 < 256 {
			t.Fatalf("token carries %d bits, want at least 256", len(raw)*8)
		}
		if seen[tok] {
			t.Fatalf("token repeated: %q", tok)
		}
		seen[tok] = true
	}
}

func TestSet(t *testing.T) {
	s := NewSet()
	a, err := s.Grant("surface-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Grant("surface-b")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		surface string
		token   string
		want    bool
	}{
		{"own token", "surface-a", a, true},
		{"other surface's token", "surface-a", b, false},
		{"own token on other surface", "surface-b", a, false},
		{"unknown surface", "surface-c", a, false},
		{"empty token", "surface-a", "", false},
		{"truncated token", "surface-a", a[:len(a)-1], false},
		{"token with suffix", "surface-a", a + "x", false},
		{"case changed", "surface-a", strings.ToUpper(a), a == strings.ToUpper(a)},
		{"hash instead of token", "surface-a", string(func() []byte { h := HashOf(a); return h[:] }()), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Check(tt.surface, tt.token); got != tt.want {
				t.Errorf("Check(%q, …) = %v, want %v", tt.surface, got, tt.want)
			}
		})
	}
	s.Revoke("surface-a")
	if s.Check("surface-a", a) {
		t.Error("revoked token still accepted")
	}
	if !s.Check("surface-b", b) {
		t.Error("revoking one surface revoked another")
	}
	a2, err := s.Grant("surface-b")
	if err != nil {
		t.Fatal(err)
	}
	if s.Check("surface-b", b) || !s.Check("surface-b", a2) {
		t.Error("re-grant must replace the earlier token")
	}
	if _, err := s.Grant(""); err == nil {
		t.Error("grant for an empty surface id succeeded")
	}
}

func TestSetKeepsOnlyHashes(t *testing.T) {
	s := NewSet()
	tok, err := s.Grant("x")
	if err != nil {
		t.Fatal(err)
	}
	for id, h := range s.hashes {
		if strings.Contains(string(h[:]), tok) || strings.Contains(id, tok) {
			t.Fatal("the set holds the token itself")
		}
		if h != HashOf(tok) {
			t.Fatal("the set holds something other than the token's hash")
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	s := NewSet()
	tok, _ := s.Grant("x")
	for b.Loop() {
		if !s.Check("x", tok) {
			b.Fatal("check failed")
		}
	}
}
