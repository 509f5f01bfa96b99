package daemon

import (
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/native"
)

func TestBlockedState(t *testing.T) {
	for _, tt := range []struct {
		run  string
		act  native.Activity
		want string // "" or a part of the reason
	}{
		{"", native.Activity{}, ""},
		{"succeeded", native.Activity{}, ""},
		{"idle", native.Activity{State: native.Attention, Notification: "Claude is waiting for your input"}, ""},
		{"running", native.Activity{State: native.Working}, ""},
		{"waitingApproval", native.Activity{}, "waits for approval"},
		{"waitingInput", native.Activity{}, "waits for an answer"},
		{"running", native.Activity{State: native.Attention, Evidence: "OSC 7501;state=blocked:app=codex:kind=permission"}, "asks for attention during a turn (OSC 7501"},
	} {
		got := blockedState(tt.run, tt.act)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("blockedState(%q, %+v) = %q, want %q", tt.run, tt.act, got, tt.want)
		}
	}
}
