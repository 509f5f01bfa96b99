package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileEntries puts a FIFO and a symlink loop where every provider's
// discovery and parser open files (transcripts, indexes, config files),
// beside one valid Gemini chat and one valid OpenCode legacy session, whose
// parses read the project files. It returns the transcript paths whose
// skips must be reported.
func hostileEntries(t *testing.T, home string) (fifos, loops []string) {
	t.Helper()
	mk := func(p string) string {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	loop := func(p string) string {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(filepath.Base(p), p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(p, body string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	claude := filepath.Join(home, ".claude", "projects", "-src-app")
	codex := filepath.Join(home, ".codex", "sessions", "2026", "03", "01")
	gem := filepath.Join(home, ".gemini")
	cursor := filepath.Join(home, ".cursor", "projects", "p", "agent-transcripts")
	oc := filepath.Join(home, ".local", "share", "opencode")
	muse := filepath.Join(home, "agents")
	fifos = []string{
		mk(filepath.Join(claude, "fifo.jsonl")),
		mk(filepath.Join(claude, "dddddddd-0000-4000-8000-000000000004", "subagents", "agent-fifo.jsonl")),
		mk(filepath.Join(codex, "rollout-2026-03-01T10-00-00-fifo.jsonl")),
		mk(filepath.Join(gem, "tmp", "proj", "chats", "session-2026-03-01T10-00-fifo.jsonl")),
		mk(filepath.Join(cursor, "fifo.jsonl")),
		mk(filepath.Join(oc, "storage", "session", "proj", "ses_fifo.json")),
		mk(filepath.Join(oc, "opencode-fifo.db")),
		mk(filepath.Join(muse, "fifo", "sessions", "fifo.jsonl")),
	}
	loops = []string{
		loop(filepath.Join(claude, "loop.jsonl")),
		loop(filepath.Join(codex, "rollout-2026-03-01T10-00-00-loop.jsonl")),
		loop(filepath.Join(gem, "tmp", "proj", "chats", "session-2026-03-01T10-00-loop.jsonl")),
		loop(filepath.Join(cursor, "loop.txt")),
		loop(filepath.Join(oc, "storage", "session", "proj", "ses_loop.json")),
		loop(filepath.Join(muse, "loop", "sessions", "loop.jsonl")),
	}
	// Project files the parsers read while parsing a valid chat: issue 22
	// measured `muster history` hung for good on the first two.
	mk(filepath.Join(gem, "tmp", "proj", ".project_root"))
	mk(filepath.Join(gem, "projects.json"))
	loop(filepath.Join(gem, "tmp", "proj2", ".project_root"))
	write(filepath.Join(gem, "tmp", "proj", "chats", "session-2026-03-01T10-00-aaaa1111.jsonl"),
		`{"sessionId":"aaaa1111-0000-4000-8000-000000000001","projectHash":"x","startTime":"2026-03-01T10:00:00Z","lastUpdated":"2026-03-01T10:00:01Z","kind":"main"}`+"\n"+
			`{"id":"m1","type":"user","timestamp":"2026-03-01T10:00:01Z","content":[{"text":"gemini hello"}]}`+"\n")
	write(filepath.Join(gem, "tmp", "proj2", "chats", "session-2026-03-01T10-00-bbbb2222.jsonl"),
		`{"sessionId":"bbbb2222-0000-4000-8000-000000000002","projectHash":"y","startTime":"2026-03-01T10:00:00Z","lastUpdated":"2026-03-01T10:00:01Z","kind":"main"}`+"\n"+
			`{"id":"m1","type":"user","timestamp":"2026-03-01T10:00:01Z","content":[{"text":"gemini again"}]}`+"\n")
	write(filepath.Join(oc, "storage", "session", "proj", "ses_ok.json"),
		`{"id":"ses_ok","projectID":"pid","title":"opencode ok","time":{"created":1772359200000,"updated":1772359201000}}`)
	write(filepath.Join(oc, "storage", "message", "ses_ok", "msg_1.json"),
		`{"id":"msg_1","sessionID":"ses_ok","role":"user","time":{"created":1772359200000}}`)
	write(filepath.Join(oc, "storage", "part", "msg_1", "prt_1.json"), `{"id":"prt_1","type":"text","text":"opencode hello"}`)
	mk(filepath.Join(oc, "storage", "message", "ses_ok", "msg_2.json"))
	mk(filepath.Join(oc, "storage", "part", "msg_1", "prt_2.json"))
	mk(filepath.Join(oc, "storage", "project", "pid.json"))
	mk(filepath.Join(muse, "fifo", "sessions", "sessions.json"))
	return fifos, loops
}

// TestHistoryHostileFiles: FIFOs and symlink loops in every provider's
// directories are skipped with a note, never waited on (issue 22: a FIFO
// at .project_root hung `muster history` for good).
func TestHistoryHostileFiles(t *testing.T) {
	e := newCLIEnv(t)
	fifos, loops := hostileEntries(t, e.home)
	type res struct {
		code        int
		out, errOut string
	}
	done := make(chan res, 1)
	go func() {
		code, out, errOut := e.run("history", "--verbose", "--limit", "0")
		done <- res{code, out, errOut}
	}()
	var r res
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("muster history did not finish: it waits on a FIFO")
	}
	if r.code != 0 {
		t.Fatalf("history: %d\n%s", r.code, r.errOut)
	}
	for _, want := range []string{"claude:cccccccc", "gemini:aaaa1111", "gemini:bbbb2222", "opencode:ses_ok"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("valid session %s not listed:\n%s", want, r.out)
		}
	}
	for _, p := range fifos {
		if !strings.Contains(r.errOut, p) {
			t.Errorf("FIFO %s skipped without a note", p)
		}
	}
	for _, p := range loops {
		if !strings.Contains(r.errOut, p) {
			t.Errorf("symlink loop %s skipped without a note", p)
		}
	}
	for _, want := range []string{"a named pipe", "a symbolic link", ".project_root", "pid.json", "msg_2.json", "prt_2.json"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("no note mentions %q", want)
		}
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", r.errOut)
	}
}
