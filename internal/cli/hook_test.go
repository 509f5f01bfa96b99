package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/iostreams"
)

func TestHookEventThroughCobraNeverFails(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantStdout string
		wantStderr string // substring, "" = empty
	}{
		{"outside a pane: silent", []string{"hook", "event", "claude"}, `{"session_id":"s","hook_event_name":"Stop"}`, "", ""},
		{"gemini gets {}", []string{"hook", "event", "gemini"}, `{"session_id":"s","hook_event_name":"AfterAgent"}`, "{}\n", ""},
		{"no provider: exit 0, one line", []string{"hook", "event"}, ``, "", "usage: muster hook event PROVIDER"},
		{"two providers: exit 0", []string{"hook", "event", "claude", "codex"}, ``, "", "usage: muster hook event PROVIDER"},
		{"unknown flag: exit 0", []string{"hook", "event", "--bogus", "cursor"}, `{}`, "{}\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, in, out, errOut := iostreams.Test()
			in.WriteString(tt.stdin)
			f := &Factory{IO: ios, Getenv: func(string) string { return "" }}
			if code := Run(context.Background(), f, tt.args); code != ExitOK {
				t.Errorf("exit %d, want 0 (stderr %q)", code, errOut.String())
			}
			if out.String() != tt.wantStdout {
				t.Errorf("stdout %q, want %q", out.String(), tt.wantStdout)
			}
			if tt.wantStderr == "" && errOut.Len() != 0 {
				t.Errorf("stderr %q, want nothing", errOut.String())
			}
			if tt.wantStderr != "" && !strings.Contains(errOut.String(), tt.wantStderr) {
				t.Errorf("stderr %q, want %q", errOut.String(), tt.wantStderr)
			}
		})
	}
}

func TestHookParentListsEvent(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	root := NewRootCmd(&Factory{IO: ios, Getenv: func(string) string { return "" }})
	cmd, _, err := root.Find([]string{"hook", "event"})
	if err != nil || cmd.Name() != "event" {
		t.Fatalf("hook event not found: %v", err)
	}
}
