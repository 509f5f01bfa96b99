package geminihook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/musterhq/muster/internal/provider/hookmap"
)

// recorded is the chat file Gemini CLI 0.61.0 wrote in e2e/realcli's
// TestMusterGeminiStates (../testdata/README.md): an Esc mid-turn, a
// refused tool, an API error.
const recorded = "../testdata/states/session-2026-12-02T03-19-aa3ac65c.jsonl"

// afterAgent maps an AfterAgent payload with "[no response text]" whose
// chat file holds the recording's first n lines.
func afterAgent(t *testing.T, n int) hookmap.Intent {
	t.Helper()
	b, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte{'\n'})
	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, bytes.Join(lines[:n], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	return mapWith(t, path)
}

func mapWith(t *testing.T, path string) hookmap.Intent {
	t.Helper()
	data, _ := json.Marshal(map[string]any{"hook_event_name": "AfterAgent", "session_id": "aa3ac65c-1884-452c-956b-62539224443c",
		"transcript_path": path, "prompt": "p", "prompt_response": noResponse, "timestamp": "2026-12-02T03:20:01.100Z"})
	in, err := mapPayload(data)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestAfterAgentCancelOrFailure: the same AfterAgent payload is the user's
// cancel or an API error, told apart by the chat file as it stood when
// the hook ran.
func TestAfterAgentCancelOrFailure(t *testing.T) {
	tests := []struct {
		name  string
		lines int
		want  hookmap.Action
	}{
		{"Esc mid-turn: the cancel, then $set lastUpdated", 6, hookmap.Interrupted},
		{"Esc mid-turn: the cancel is the last line", 5, hookmap.Interrupted},
		{"the prompt only (no record after it)", 4, hookmap.Failed},
		{"API error: the error, then its info note", 24, hookmap.Failed},
		{"API error: the error is the last message", 22, hookmap.Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if in := afterAgent(t, tt.lines); in.Act != tt.want {
				t.Errorf("act %v (%q), want %v", in.Act, in.Message, tt.want)
			}
		})
	}
	for _, path := range []string{"", "relative/session.jsonl", filepath.Join(t.TempDir(), "missing.jsonl"), t.TempDir() + "/x.json", t.TempDir()} {
		if in := mapWith(t, path); in.Act != hookmap.Failed {
			t.Errorf("transcript_path %q: act %v, want failed", path, in.Act)
		}
	}
}
