package claude

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
		{"\x1b", inp, provider.KeyInterrupt},
		{"\x1b", done, provider.KeyNone},
		{"\x1b[27u", run, provider.KeyInterrupt},
		{"\x1b[27;1u", appr, provider.KeyInterrupt},
		{"\x1b[27;1:1u", inp, provider.KeyInterrupt},
		{"\x1b[27;5u", run, provider.KeyNone}, // Ctrl-Esc
		{"\x1b[A", appr, provider.KeyNone},
		{"\x1b\x1b", run, provider.KeyNone},
		{"\x03", run, provider.KeyInterrupt},
		{"\x1b[99;5u", run, provider.KeyInterrupt},
		{"\x03", appr, provider.KeyNone}, // the dialog stays (measured)
		{"\x1b[99;5u", inp, provider.KeyNone},
		{"\x03", done, provider.KeyNone},
		{"\x1b[99;1u", run, provider.KeyNone},
		{"\r", appr, provider.KeyAnswer},
		{"\r", inp, provider.KeyAnswer},
		{"\r", run, provider.KeyNone}, // queues a message
		{"\x1b[13u", appr, provider.KeyAnswer},
		{"1", appr, provider.KeyAnswer},
		{"4", appr, provider.KeyAnswer},
		{"1", inp, provider.KeyNone},
		{"0", appr, provider.KeyNone},
		{"y", appr, provider.KeyNone},
		{"", run, provider.KeyNone},
		{"hello\r", appr, provider.KeyNone},
	}
	for _, tt := range tests {
		if got := (Provider{}).Key([]byte(tt.in), tt.state); got != tt.want {
			t.Errorf("Key(%q, %s) = %s, want %s", tt.in, tt.state, got, tt.want)
		}
	}
}
