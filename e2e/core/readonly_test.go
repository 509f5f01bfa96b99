package core_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistoryOnAReadOnlyStateDir: a state dir that cannot be written (a
// read-only mount) still holds an index: `muster history` lists and
// searches it, saying so, instead of failing (issue 22, item 15).
func TestHistoryOnAReadOnlyStateDir(t *testing.T) {
	e := newEnv(t)
	writeClaudeSession(t, e, "eeeeeeee-0000-4000-8000-00000000000a", "find the readonly bug")
	if out := e.must("history", "--provider", "claude"); !strings.Contains(out, "readonly bug") {
		t.Fatalf("history before: %s", out)
	}
	e.must("daemon", "stop", "--force")
	state := filepath.Join(e.home, "state")
	if out, err := exec.Command("mount", "--bind", state, state).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount the state dir here (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", state).Run() })
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", state).CombinedOutput(); err != nil {
		t.Skipf("cannot remount it read-only: %v %s", err, out)
	}
	r := e.run("history", "--provider", "claude", "--search", "readonly")
	if r.code != 0 || !strings.Contains(r.stdout, "readonly bug") || !strings.Contains(r.stderr, "cannot be written") {
		t.Fatalf("history on a read-only state dir: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// writeClaudeSession writes a Claude Code transcript of one prompt and one
// reply in the env's user home.
func writeClaudeSession(t *testing.T, e *env, id, prompt string) {
	t.Helper()
	var b strings.Builder
	for _, rec := range []map[string]any{
		{"type": "user", "uuid": "u1", "message": map[string]any{"role": "user", "content": prompt}},
		{"type": "assistant", "uuid": "u2", "requestId": "q1", "message": map[string]any{
			"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{map[string]any{"type": "text", "text": "looking"}},
			"usage":   map[string]any{"input_tokens": 1, "output_tokens": 1}}},
	} {
		rec["sessionId"], rec["cwd"], rec["timestamp"] = id, "/src/ro", "2026-03-05T10:00:00Z"
		line, _ := json.Marshal(rec)
		b.Write(append(line, '\n'))
	}
	p := filepath.Join(e.userHome(), ".claude", "projects", "-src-ro", id+".jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
