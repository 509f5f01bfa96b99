package codex

import (
	"testing"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
)

func TestKey(t *testing.T) {
	const (
		run  = proto.StateRunning
		appr = proto.StateWaitingApproval
		inp  = proto.StateWaitingInput
		done = proto.StateSucceeded
	)
	tests := []struct {
		in    string
		state proto.RunState
		want  provider.KeyEffect
	}{
		{"\x1b", run, provider.KeyInterrupt},
		{"\x1b", appr, provider.KeyInterrupt},
		{"\x1b[27u", run, provider.KeyInterrupt},
		{"\x1b", done, provider.KeyNone},
		{"n", appr, provider.KeyInterrupt},
		{"\x1b[110u", appr, provider.KeyInterrupt},
		{"n", run, provider.KeyNone}, // typing a message
		{"y", appr, provider.KeyAnswer},
		{"a", appr, provider.KeyAnswer},
		{"\x1b[121;1u", appr, provider.KeyAnswer},
		{"y", run, provider.KeyNone},
		{"\r", appr, provider.KeyAnswer},
		{"\r", run, provider.KeyNone}, // queues a message
		{"\x1b[A", appr, provider.KeyNone},
		{"\x1b[121;5u", appr, provider.KeyNone}, // Ctrl-y
		{"yes", appr, provider.KeyNone},
		{"", run, provider.KeyNone},
	}
	for _, tt := range tests {
		if got := (Provider{}).Key([]byte(tt.in), tt.state); got != tt.want {
			t.Errorf("Key(%q, %s) = %s, want %s", tt.in, tt.state, got, tt.want)
		}
	}
}
