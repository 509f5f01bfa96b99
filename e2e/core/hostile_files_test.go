package core_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDaemonSkipsHostileTranscriptFiles: a FIFO and a symlink loop in
// every provider's directories, and at the project files Gemini's parser
// reads, never stall the daemon's transcript watcher: it indexes the valid
// chats beside them, picks up a later change, the daemon keeps answering,
// and `daemon stop` ends it (issue 22: its watcher blocked in open(2) on a
// FIFO, and the daemon outlived `daemon stop` holding its lock).
func TestDaemonSkipsHostileTranscriptFiles(t *testing.T) {
	e := newEnv(t)
	home := e.userHome()
	mk := func(p string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	loop := func(p string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(filepath.Base(p), p); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, body string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	claude := filepath.Join(home, ".claude", "projects", "-src-app")
	gem := filepath.Join(home, ".gemini")
	oc := filepath.Join(home, ".local", "share", "opencode")
	for _, dir := range []string{
		claude,
		filepath.Join(home, ".codex", "sessions", "2026", "03", "01"),
		filepath.Join(gem, "tmp", "proj", "chats"),
		filepath.Join(home, ".cursor", "projects", "p", "agent-transcripts"),
		filepath.Join(oc, "storage", "session", "proj"),
	} {
		name := "rollout-2026-03-01T10-00-00-x.jsonl"
		if strings.Contains(dir, "chats") {
			name = "session-2026-03-01T10-00-x.jsonl"
		} else if strings.Contains(dir, "opencode") {
			name = "ses_x.json"
		}
		mk(filepath.Join(dir, "fifo-"+name))
		loop(filepath.Join(dir, "loop-"+name))
	}
	mk(filepath.Join(home, "agents", "fifo", "sessions", "fifo.jsonl"))
	mk(filepath.Join(gem, "tmp", "proj", ".project_root"))
	mk(filepath.Join(gem, "projects.json"))
	mk(filepath.Join(oc, "opencode-fifo.db"))
	write(filepath.Join(gem, "tmp", "proj", "chats", "session-2026-03-01T10-00-aaaa1111.jsonl"),
		`{"sessionId":"aaaa1111-0000-4000-8000-000000000001","projectHash":"x","startTime":"2026-03-01T10:00:00Z","kind":"main"}`+"\n"+
			`{"id":"m1","type":"user","timestamp":"2026-03-01T10:00:01Z","content":[{"text":"gemini hello"}]}`+"\n")

	logPath := filepath.Join(e.home, "state", "daemon.log")
	refreshes := func() int {
		b, _ := os.ReadFile(logPath)
		return strings.Count(string(b), "transcript index refreshed")
	}
	e.ls() // starts the daemon
	if !eventually(func() bool { return refreshes() >= 1 }) {
		b, _ := os.ReadFile(logPath)
		t.Fatalf("the daemon's transcript watcher never finished a refresh; daemon.log:\n%s", b)
	}
	// A change after the first refresh: a valid transcript and one more
	// FIFO beside it.
	mk(filepath.Join(claude, "fifo-later.jsonl"))
	write(filepath.Join(claude, "bbbbbbbb-0000-4000-8000-000000000002.jsonl"),
		`{"type":"user","sessionId":"bbbbbbbb-0000-4000-8000-000000000002","cwd":"/src/app","uuid":"u1","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"claude hello"}}`+"\n")
	if !eventually(func() bool { return refreshes() >= 2 }) {
		b, _ := os.ReadFile(logPath)
		t.Fatalf("the watcher did not index a change after the first refresh; daemon.log:\n%s", b)
	}
	e.ls() // still answering

	var st struct{ PID int }
	if err := json.Unmarshal([]byte(e.must("daemon", "status", "--json")), &st); err != nil || st.PID <= 0 {
		t.Fatalf("daemon status: %v %+v", err, st)
	}
	e.must("daemon", "stop", "--force")
	if !eventually(func() bool { return errors.Is(syscall.Kill(st.PID, 0), syscall.ESRCH) }) {
		t.Fatalf("daemon %d still runs after `daemon stop`", st.PID)
	}
	e.ls() // a new daemon starts
}
