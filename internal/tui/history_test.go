package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/transcript"
)

func fixtureHistory() []HistoryRow {
	return []HistoryRow{
		{Ref: "claude:aaaa-1111", Provider: "claude", ID: "aaaa-1111", Title: "Fix the flaky login test", CWD: "/home/u/src/api",
			When: fixtureNow.Add(-2 * time.Hour), Prompts: 4, Tools: 12, Resumable: true},
		{Ref: "codex:bbbb-2222", Provider: "codex", ID: "bbbb-2222", Title: "Migrate the 数据库 schema\x1b]52;c;eA==\x07", CWD: "/home/u/src/db",
			When: fixtureNow.Add(-50 * time.Hour), Prompts: 2, Tools: 3, Resumable: true},
		{Ref: "muse:cccc-3333", Provider: "muse", ID: "cccc-3333", Title: "Write the release notes", CWD: "/gone",
			When: fixtureNow.Add(-100 * time.Hour)},
	}
}

func fixtureTranscript() *transcript.Transcript {
	return &transcript.Transcript{Session: transcript.Session{Provider: "claude", ID: "aaaa-1111", Title: "Fix the flaky login test"},
		Items: []transcript.Item{
			{Kind: transcript.UserPrompt, Text: "Why does TestLogin fail one run in ten?"},
			{Kind: transcript.Thinking, Text: "secret thoughts"},
			{Kind: transcript.AssistantText, Text: "It races on the session cache; I will look.\x1b[2J"},
			{Kind: transcript.ToolUse, CallID: "c1", Tool: "Bash", Input: json.RawMessage(`{"command":"go test -run TestLogin -count 20 ./auth"}`)},
			{Kind: transcript.ToolResult, CallID: "c1", Text: "--- FAIL: TestLogin\nFAIL\nexit status 1\n", IsError: true},
			{Kind: transcript.ToolUse, CallID: "c2", Tool: "Edit", Input: json.RawMessage(`{"file_path":"auth/cache.go"}`)},
			{Kind: transcript.ToolResult, CallID: "c2", Text: "ok"},
			{Kind: transcript.AssistantText, Text: "Fixed: the cache now takes a lock."},
		}}
}

func TestHistoryTab(t *testing.T) {
	b := &fakeBackend{sessions: fixtureSessions(), history: fixtureHistory(),
		scripts: map[string]*transcript.Transcript{"claude:aaaa-1111": fixtureTranscript()}}
	start := t.TempDir()
	m := loaded(t, b, 120, 30, Options{Dir: start})
	m = keysRun(t, m, "h")
	frame := m.View().Content
	plain := ansi.Strip(frame)
	for _, want := range []string{"History", "3 sessions, newest first", "▸ 2h     claude    Fix the flaky login test", "Migrate the 数据库 schema", "~/src/db"} {
		if !strings.Contains(plain, want) {
			t.Errorf("history tab lacks %q:\n%s", want, plain)
		}
	}
	if strings.Contains(frame, "]52;") {
		t.Error("a title's escape sequence reached the screen")
	}
	if m.pvMode() != pvHidden {
		t.Error("the preview stays on over the history tab")
	}

	// Search.
	m = keysRun(t, m, "/")
	m = typeText(t, m, "release")
	m = keysRun(t, m, "enter")
	if got := b.Calls(); got[len(got)-1] != "history release" || len(m.hist.rows) != 1 || m.hist.shown != "release" {
		t.Fatalf("search: calls %v, rows %+v", got, m.hist.rows)
	}
	if !strings.Contains(ansi.Strip(m.View().Content), `1 session matching "release"`) {
		t.Errorf("the search is not shown:\n%s", ansi.Strip(m.View().Content))
	}
	// A provider that cannot resume says so; esc clears the search.
	m = keysRun(t, m, "r")
	if m.status != "muse cannot reopen a conversation in a pane" {
		t.Errorf("r on muse: %q", m.status)
	}
	m = keysRun(t, m, "esc")
	if len(m.hist.rows) != 3 || m.hist.shown != "" {
		t.Fatalf("esc did not clear the search: %+v", m.hist)
	}

	// Enter opens the transcript, tool output folded.
	m = keysRun(t, m, "enter")
	if m.tview == nil || m.tview.t == nil {
		t.Fatalf("no transcript view: %+v", m.tview)
	}
	plain = ansi.Strip(m.View().Content)
	for _, want := range []string{"Transcript Fix the flaky login test", "── prompt 1", "› Why does TestLogin fail one run in ten?",
		"It races on the session cache; I will look.", "✗ Bash $ go test -run TestLogin -count 20 ./auth  ⎿ 3 lines",
		"⚙ Edit auth/cache.go", "Fixed: the cache now takes a lock."} {
		if !strings.Contains(plain, want) {
			t.Errorf("transcript lacks %q:\n%s", want, plain)
		}
	}
	if strings.Contains(plain, "secret thoughts") || strings.Contains(plain, "--- FAIL") || strings.Contains(m.View().Content, "\x1b[2J") {
		t.Errorf("thinking, folded output or an escape sequence shows:\n%s", plain)
	}
	m = keysRun(t, m, "t")
	if !strings.Contains(ansi.Strip(m.View().Content), "│ --- FAIL: TestLogin") {
		t.Errorf("t does not unfold tool output:\n%s", ansi.Strip(m.View().Content))
	}

	// w writes the replay and says where.
	m = keysRun(t, m, "w")
	if m.status != "wrote /tmp/replay-claude-aaaa-1111.html" {
		t.Errorf("w: status %q", m.status)
	}

	// r resumes it in a new pane and attaches.
	m = keysRun(t, m, "r")
	got := b.Calls()
	// Its directory is gone here, so the pane starts where the dashboard did.
	if want := "new provider=claude cmd=\"\" dir=" + start + " name= args=[] resume=aaaa-1111"; got[len(got)-1] != want || m.Attach() != "claude-1" {
		t.Errorf("r: calls %v attach %q", got[len(got)-2:], m.Attach())
	}

	// A conversation a live pane runs is attached to, not resumed again.
	b.mu.Lock()
	for i := range b.sessions {
		if b.sessions[i].Name == "api" {
			b.sessions[i].NativeSessionID = "aaaa-1111"
		}
	}
	b.mu.Unlock()
	m = loaded(t, b, 120, 30, Options{})
	m = keysRun(t, m, "h", "enter", "r")
	if calls := b.Calls(); m.Attach() != "api" || strings.HasPrefix(calls[len(calls)-1], "new ") {
		t.Errorf("r on a live conversation: attach %q, last call %q", m.Attach(), calls[len(calls)-1])
	}

	// esc closes the transcript, h goes back to the sessions.
	m = loaded(t, b, 120, 30, Options{})
	m = keysRun(t, m, "h", "enter", "esc", "h")
	if m.tab != tabSessions || m.tview != nil {
		t.Errorf("esc, h: tab %v view %v", m.tab, m.tview != nil)
	}
}
