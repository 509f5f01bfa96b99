package claude

import (
	"testing"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
)

func TestStatus(t *testing.T) {
	status := func(raw string) termsignal.Signal {
		_, sigs := termsignal.New().Feed([]byte("\x1b]"+raw+"\x07"), nil)
		if len(sigs) != 1 {
			t.Fatalf("%q scanned to %d signals", raw, len(sigs))
		}
		return sigs[0]
	}
	tests := []struct {
		raw   string
		state proto.RunState
		want  proto.EventKind
	}{
		{"7501;state=idle:app=claude-code", proto.StateRunning, proto.KindInterrupted},
		{"7501;state=idle:app=claude-code", proto.StateWaitingApproval, proto.KindInterrupted},
		{"7501;state=idle:app=claude-code", proto.StateWaitingInput, proto.KindInterrupted},
		{"7501;state=idle:app=claude-code", proto.StateSucceeded, ""},
		{"7501;state=idle:app=codex", proto.StateRunning, ""},
		{"7501;state=working:app=claude-code", proto.StateWaitingApproval, proto.KindRunning},
		{"7501;state=working:app=claude-code", proto.StateRunning, ""},
		{"7501;state=done:app=claude-code", proto.StateRunning, ""},
		{"7501;state=error:app=claude-code", proto.StateRunning, ""},
		{"7501;state=blocked:app=claude-code:kind=permission", proto.StateRunning, ""},
		{"9;4;3;", proto.StateWaitingApproval, proto.KindRunning},
		{"9;4;3;", proto.StateRunning, ""},
		{"9;4;0;", proto.StateRunning, ""},
		{"9;4;0;", proto.StateWaitingApproval, ""},
	}
	for _, tt := range tests {
		if got := (Provider{}).Status(status(tt.raw), tt.state); got != tt.want {
			t.Errorf("Status(%q, %s) = %q, want %q", tt.raw, tt.state, got, tt.want)
		}
	}
}
