package cli

import (
	"context"
	"os"
	"path/filepath"
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

func TestHookCaptureWithTheDaemonDown(t *testing.T) {
	home, err := os.MkdirTemp("", "mh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	env := map[string]string{
		"MUSTER_HOME":             home,
		"MUSTER_AGENT_SESSION_ID": "3f1c2b9e-0000-4000-8000-000000000001",
		"MUSTER_EVENT_CAPABILITY": "secret-capability",
	}
	for _, tt := range []struct {
		name, stdin string
		want        int
	}{
		{"silent, exit 0", `{"version":1,"event":"session_started","session_id":"conv-1"}`, ExitOK},
		// Bad input is still an error: it would be refused with a daemon too.
		{"bad payload still fails", `{"version":2}`, ExitError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ios, in, out, errOut := iostreams.Test()
			in.WriteString(tt.stdin)
			f := &Factory{IO: ios, Getenv: func(k string) string { return env[k] }}
			code := Run(t.Context(), f, []string{"hook", "capture", "--provider", "custom", "--process-id", "1"})
			if code != tt.want {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tt.want, errOut.String())
			}
			if code == ExitOK && (out.Len() != 0 || errOut.Len() != 0) {
				t.Errorf("stdout %q, stderr %q; want nothing", out.String(), errOut.String())
			}
		})
	}
	log, err := os.ReadFile(filepath.Join(home, "state", "hook.log"))
	if err != nil || strings.Count(string(log), "daemon unreachable") != 1 {
		t.Errorf("hook.log = %q, %v; want one line saying the daemon was unreachable", log, err)
	}
	if strings.Contains(string(log), env["MUSTER_EVENT_CAPABILITY"]) {
		t.Error("hook.log contains the capability")
	}
}
