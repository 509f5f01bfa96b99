package gemini

import (
	"testing"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
)

func TestRequest(t *testing.T) {
	title := func(s string) termsignal.Signal {
		return termsignal.Signal{Kind: termsignal.KindTitle, OSC: 0, Title: s}
	}
	tests := []struct {
		sig  termsignal.Signal
		want proto.EventKind
		ok   bool
	}{
		{title("✋  Action Required (repo)                    "), proto.KindApprovalRequested, true},
		{title("✦  Working… (repo)"), "", true},
		{title("◇  Ready (repo)"), "", true},
		{title(""), "", false},              // cleared on exit: says nothing
		{title("vim notes.txt"), "", false}, // not Gemini's
		{termsignal.Signal{Kind: termsignal.KindAgentStatus, State: "blocked"}, "", false},
	}
	for _, tt := range tests {
		got, ok := Provider{}.Request(tt.sig)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Request(%q) = %q, %v; want %q, %v", tt.sig.Title, got, ok, tt.want, tt.ok)
		}
	}
}
