package web

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/transcript"
)

// TestStatsPage: sessions over three days with two models, tool calls
// and edits; the page's charts carry the hand-computed figures.
func TestStatsPage(t *testing.T) {
	root := t.TempDir()
	day := func(d int) time.Time { return time.Date(2026, 3, d, 10, 0, 0, 0, time.UTC) }
	write := func(name string, tr transcript.Transcript) {
		data, _ := json.Marshal(tr)
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit := json.RawMessage(`{"file_path":"/src/app/main.go","old_string":"a\nb","new_string":"a\nc\nd"}`)
	for i, s := range []struct {
		day   int
		model string
		in    int64
		out   int64
	}{{1, "claude-sonnet-4-5", 1000, 500}, {1, "claude-sonnet-4-5", 2000, 1000}, {3, "gpt-5-codex", 4000, 1000}, {10, "claude-sonnet-4-5", 100, 100}} {
		u := transcript.Usage{Input: s.in, Output: s.out}
		write(fmt.Sprintf("s%d.json", i), transcript.Transcript{
			Session: transcript.Session{ID: fmt.Sprintf("stat-%d", i), Model: s.model, PromptCount: 1, ToolCallCount: 2, StartedAt: day(s.day), EndedAt: day(s.day).Add(time.Minute),
				Usage: &u, UsageByModel: map[string]transcript.Usage{s.model: u}},
			Items: []transcript.Item{
				{Kind: transcript.UserPrompt, Text: "go"},
				{Kind: transcript.ToolUse, Tool: "Bash", CallID: "b", Input: json.RawMessage(`{"command":"make"}`)},
				{Kind: transcript.ToolResult, CallID: "b", Text: "ok"},
				{Kind: transcript.ToolUse, Tool: "Edit", CallID: "e", Input: edit},
				{Kind: transcript.ToolResult, CallID: "e", Text: "ok"},
			}})
	}
	st, err := store.OpenIndex(t.Context(), filepath.Join(t.TempDir(), "muster.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	idx := history.New(st, "test")
	srcs := []transcript.Source{jsonSource{root}}
	srv, err := New(Options{Index: idx, Sources: srcs, Version: "test", Location: time.UTC,
		Now: func() time.Time { return time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: srv}
	rec := f.get(t, "/stats?days=7", nil)
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("GET /stats: %d %s", rec.Code, body)
	}
	// Session 3 (March 10) is after "now"; sessions 0–2 are in the last 7
	// days: 3 sessions, 9,500 tokens, 6 tool calls, one file edited 3 times.
	for _, want := range []string{
		"2026-02-26 to 2026-03-04", "<b>3</b>sessions", "<b>6</b>tool calls", "<b>9.5k</b>tokens",
		`<title>Mar 1: 4.5k</title>`, `<title>Mar 3: 5.0k</title>`, `<title>Mar 2: 0</title>`,
		`<title>claude-sonnet-4-5: 4.5k</title>`, `<title>gpt-5-codex: 5.0k</title>`,
		`<title>Bash: 3</title>`, `<title>Edit: 3</title>`,
		`<title>/src/app/main.go: 9</title>`, // 3 edits of +2 −1
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the stats page lacks %q", want)
		}
	}
	if n := strings.Count(body, "<svg"); n != 7 {
		t.Errorf("%d charts, want 7", n)
	}
	// Seven days, seven columns in each per-day chart.
	cols := regexp.MustCompile(`(?s)<h2>Tokens per day</h2>(.*?)</svg>`).FindStringSubmatch(body)
	if cols == nil || strings.Count(cols[1], "<rect") != 7 {
		t.Errorf("tokens per day has no 7 columns")
	}
	if strings.Contains(body, "<script") {
		t.Error("the stats page has a script")
	}
	for _, bad := range []string{"/stats?days=0", "/stats?days=x", "/stats?provider=nope"} {
		if rec := f.get(t, bad, nil); rec.Code != 400 {
			t.Errorf("GET %s: %d, want 400", bad, rec.Code)
		}
	}
	// A long period is drawn by month, and the menu keeps its choice.
	body = f.get(t, "/stats?days=400", nil).Body.String()
	if !strings.Contains(body, "<title>Mar 2026: 9.5k</title>") || !strings.Contains(body, "Tokens per month") || !strings.Contains(body, `<option value="400" selected>`) {
		t.Error("a 400-day period is not drawn by month")
	}
	// An empty period says so.
	if body := f.get(t, "/stats?days=1", nil).Body.String(); !strings.Contains(body, "Nothing in this period") {
		t.Error("an empty period draws charts")
	}
}

// Usage of a model with no known price costs "unknown" on the page, as
// `muster stats` says, never $0.00.
func TestStatsPageUnpricedCost(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC)
	u := transcript.Usage{Input: 1000, Output: 500}
	data, _ := json.Marshal(transcript.Transcript{
		Session: transcript.Session{ID: "unpriced", Model: "local-mystery-7b", PromptCount: 1, StartedAt: at, EndedAt: at.Add(time.Minute),
			Usage: &u, UsageByModel: map[string]transcript.Usage{"local-mystery-7b": u}},
		Items: []transcript.Item{{Kind: transcript.UserPrompt, Text: "go"}},
	})
	if err := os.WriteFile(filepath.Join(root, "s.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenIndex(t.Context(), filepath.Join(t.TempDir(), "muster.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := New(Options{Index: history.New(st, "test"), Sources: []transcript.Source{jsonSource{root}}, Version: "test", Location: time.UTC,
		Now: func() time.Time { return time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	body := (&fixture{srv: srv}).get(t, "/stats?days=7", nil).Body.String()
	if !strings.Contains(body, "<b>unknown</b>approximate cost") || strings.Contains(body, "$0.00") {
		t.Errorf("the cost tile of unpriced usage is not \"unknown\":\n%s", body[max(0, strings.Index(body, "approximate cost")-200):][:300])
	}
}
