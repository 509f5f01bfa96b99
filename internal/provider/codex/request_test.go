package codex

import (
	"testing"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
)

// scan reads one OSC sequence (without ESC ] and ST) as the pane does.
func scan(t *testing.T, raw string) termsignal.Signal {
	t.Helper()
	_, sigs := termsignal.New().Feed([]byte("\x1b]"+raw+"\x1b\\"), nil)
	if len(sigs) != 1 {
		t.Fatalf("%q scanned to %d signals", raw, len(sigs))
	}
	return sigs[0]
}

func TestRequest(t *testing.T) {
	tests := []struct {
		osc  string
		want proto.EventKind
		ok   bool
	}{
		{"7501;state=blocked:app=codex:kind=permission", proto.KindApprovalRequested, true},
		{"7501;state=blocked:app=codex", proto.KindApprovalRequested, true},
		{"7501;state=blocked:app=codex:kind=question", proto.KindInputRequested, true},
		{"7501;state=working:app=codex", "", true},
		{"7501;state=done:app=codex", "", true},
		{"7501;state=idle:app=codex", "", true},
		{"7501;state=clear", "", true},
		{"7501;state=blocked:app=claude-code", "", false},
		{"7501;state=thinking:app=codex", "", false},
		{"0;[ ! ] Action Required | repo", "", false}, // titles are 7501's fallback only
	}
	for _, tt := range tests {
		got, ok := Provider{}.Request(scan(t, tt.osc))
		if got != tt.want || ok != tt.ok {
			t.Errorf("Request(%q) = %q, %v; want %q, %v", tt.osc, got, ok, tt.want, tt.ok)
		}
	}
}

func TestStatus(t *testing.T) {
	working := scan(t, "7501;state=working:app=codex")
	for _, tt := range []struct {
		sig   termsignal.Signal
		state proto.RunState
		want  proto.EventKind
	}{
		{working, proto.StateWaitingApproval, proto.KindRunning},
		{working, proto.StateWaitingInput, proto.KindRunning},
		{working, proto.StateRunning, ""},
		{scan(t, "7501;state=done:app=codex"), proto.StateWaitingApproval, ""},
		{scan(t, "7501;state=working:app=other"), proto.StateWaitingApproval, ""},
	} {
		if got := (Provider{}).Status(tt.sig, tt.state); got != tt.want {
			t.Errorf("Status(%s, %s) = %q, want %q", tt.sig.Raw, tt.state, got, tt.want)
		}
	}
}
