package gemini

import (
	"testing"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
)

func TestKey(t *testing.T) {
	const (
		run  = proto.StateRunning
		appr = proto.StateWaitingApproval
		done = proto.StateFailed
	)
	tests := []struct {
		in    string
		state proto.RunState
		want  provider.KeyEffect
	}{
		{"\x1b", run, provider.KeyInterrupt},
		{"\x1b[27;1:1u", run, provider.KeyInterrupt},
		{"\x1b", appr, provider.KeyInterrupt},
		{"\x1b", done, provider.KeyNone},
		{"3", appr, provider.KeyInterrupt},
		{"3", run, provider.KeyNone},
		{"\r", appr, provider.KeyAnswer},
		{"\x1b[13u", appr, provider.KeyAnswer},
		{"1", appr, provider.KeyAnswer},
		{"2", appr, provider.KeyAnswer},
		{"\r", run, provider.KeyNone},
		{"y", appr, provider.KeyNone},
		{"\x1b[B", appr, provider.KeyNone},
	}
	for _, tt := range tests {
		if got := (Provider{}).Key([]byte(tt.in), tt.state); got != tt.want {
			t.Errorf("Key(%q, %s) = %s, want %s", tt.in, tt.state, got, tt.want)
		}
	}
}
