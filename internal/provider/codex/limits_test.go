package codex

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

func TestFindLimitRollout(t *testing.T) {
	home := t.TempDir()
	b, err := os.ReadFile("testdata/limit/rollout-limit.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const id = "01a24463-87fb-79b1-8bec-c593be01093d"
	dir := filepath.Join(home, ".codex", "sessions", "2026", "12", "05")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-12-05T04-08-23-"+id+".jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 5, 4, 8, 24, 0, time.UTC)
	q := provider.LimitQuery{Env: transcript.Env{Home: home}, NativeID: id, At: at}
	l, ok := Provider{}.FindLimit(q)
	if !ok {
		t.Fatal("the rollout's usage_limit_exceeded turn was not read as a limit")
	}
	if want := time.Unix(1796443883, 0); !l.ResetsAt.Equal(want) {
		t.Errorf("resets %v, want the rate_limits resets_at %v", l.ResetsAt, want)
	}
	if l.Evidence != "rollout task_complete (codex_error_info usage_limit_exceeded), token_count rate_limits resets_at" {
		t.Errorf("evidence %q", l.Evidence)
	}
	q.Open = true
	if _, ok := (Provider{}).FindLimit(q); ok {
		t.Error("an open run was read as limited")
	}
	// A later turn that succeeded ends the limit.
	more := append(b, []byte(`{"timestamp":"2026-12-05T04:12:00.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t2"}}
{"timestamp":"2026-12-05T04:12:01.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t2","last_agent_message":"ok"}}
`)...)
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-12-05T04-08-23-"+id+".jsonl"), more, 0o644); err != nil {
		t.Fatal(err)
	}
	q.Open = false
	if l, ok := (Provider{}).FindLimit(q); ok {
		t.Errorf("a succeeded later turn read as limited: %+v", l)
	}
}

func TestFindLimitScreen(t *testing.T) {
	b, err := os.ReadFile("testdata/limit/screen.txt")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 5, 4, 8, 24, 0, time.UTC)
	q := provider.LimitQuery{Env: transcript.Env{Home: t.TempDir()}, NativeID: "none", At: at, Screen: func() string { return string(b) }}
	l, ok := Provider{}.FindLimit(q)
	if !ok {
		t.Fatal("the screen's limit was not read")
	}
	if want := time.Date(2026, 12, 5, 4, 11, 0, 0, time.UTC); !l.ResetsAt.Equal(want) {
		t.Errorf("resets %v, want %v", l.ResetsAt, want)
	}
	if l.Evidence != "screen: hit your usage limit" {
		t.Errorf("evidence %q", l.Evidence)
	}
	keys, text := Provider{}.Continue(string(b))
	if keys != "\x1b" || text != "continue" {
		t.Errorf("continue at the rate limit dialog: %q then %q; want Esc then continue", keys, text)
	}
	if keys, _ := (Provider{}).Continue("› \n"); keys != "" {
		t.Errorf("continue at the prompt presses %q first", keys)
	}
	q.Screen = func() string { return "› say hello\n  Worked for 1s\n" }
	if _, ok := (Provider{}).FindLimit(q); ok {
		t.Error("a screen without the limit's words read as limited")
	}
}

func TestTryAgainAt(t *testing.T) {
	at := time.Date(2026, 12, 5, 16, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		msg  string
		want time.Time
	}{
		{"or try again at 4:11 AM.", time.Date(2026, 12, 6, 4, 11, 0, 0, time.UTC)},
		{"or try again\nat 5:30 PM.", time.Date(2026, 12, 5, 17, 30, 0, 0, time.UTC)},
		{"or try again at Dec 7th, 2026 3:45 PM.", time.Date(2026, 12, 7, 15, 45, 0, 0, time.UTC)},
		{"try again later", time.Time{}},
		{"try again at 13:00 PM", time.Time{}},
	} {
		if got := tryAgainAt(c.msg, at); !got.Equal(c.want) {
			t.Errorf("tryAgainAt(%q) = %v, want %v", c.msg, got, c.want)
		}
	}
	if _, ok := (Provider{}).ReadLimit("the turn ended with an error (OSC 7501;state=error:app=codex)", at); ok {
		t.Error("a plain failure read as a limit")
	}
	if r, ok := (Provider{}).ReadLimit("You’ve hit your usage limit. … try again at 4:11 AM.", at); !ok || r.Hour() != 4 {
		t.Errorf("Codex's words: %v %v", r, ok)
	}
}
