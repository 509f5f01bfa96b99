package web

import (
	"encoding/json"
	"fmt"
	"html"
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

// manySessions is a server over n generated sessions, session i started i
// minutes before a fixed time (so session 0 is the newest); session 7 has
// a word only in a tool output in the middle of it.
func manySessions(t *testing.T, n int) *Server {
	t.Helper()
	root := t.TempDir()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := range n {
		tr := transcript.Transcript{Session: transcript.Session{ID: fmt.Sprintf("s%04d-aaaa", i), Title: fmt.Sprintf("session number %d", i),
			PromptCount: 2, ToolCallCount: 1, StartedAt: t0.Add(-time.Duration(i) * time.Minute), EndedAt: t0.Add(-time.Duration(i)*time.Minute + 30*time.Second)},
			Items: []transcript.Item{
				{Kind: transcript.UserPrompt, Text: "first prompt"},
				{Kind: transcript.ToolUse, Tool: "Bash", CallID: "c", Input: json.RawMessage(`{"command":"make"}`)},
				{Kind: transcript.ToolResult, CallID: "c", Text: "building\nall good\n"},
				{Kind: transcript.UserPrompt, Text: "second prompt"},
			}}
		if i == 7 {
			tr.Items[2].Text = "building\nzanzibar linker error in the middle\n"
		}
		data, _ := json.Marshal(tr)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("%04d.json", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := store.OpenIndex(t.Context(), filepath.Join(t.TempDir(), "muster.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	idx := history.New(st, "test")
	srcs := []transcript.Source{jsonSource{root}}
	if _, err := idx.Refresh(t.Context(), srcs, transcript.Env{}, history.RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Index: idx, Sources: srcs, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

var rowID = regexp.MustCompile(`href="/session/fake/(s\d{4}-aaaa)"`)

func TestHistoryPages(t *testing.T) {
	srv := manySessions(t, 120)
	f := &fixture{srv: srv}
	seen := map[string]bool{}
	next := "/"
	for page := 1; next != ""; page++ {
		rec := f.get(t, next, nil)
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d", next, rec.Code)
		}
		body := rec.Body.String()
		ids := rowID.FindAllStringSubmatch(body, -1)
		wantRows := map[int]int{1: 50, 2: 50, 3: 20}[page]
		if len(ids) != wantRows {
			t.Fatalf("page %d has %d rows, want %d", page, len(ids), wantRows)
		}
		for _, m := range ids {
			if seen[m[1]] {
				t.Errorf("page %d repeats %s", page, m[1])
			}
			seen[m[1]] = true
		}
		// Newest first across pages: page 2 starts with session 50.
		if first := ids[0][1]; first != fmt.Sprintf("s%04d-aaaa", (page-1)*50) {
			t.Errorf("page %d starts with %s", page, first)
		}
		if want := fmt.Sprintf("%d–%d of 120 sessions", (page-1)*50+1, (page-1)*50+wantRows); !strings.Contains(body, want) {
			t.Errorf("page %d lacks %q", page, want)
		}
		if (page > 1) != strings.Contains(body, `rel="prev"`) {
			t.Errorf("page %d: wrong previous link", page)
		}
		next = ""
		if m := regexp.MustCompile(`<a href="([^"]*)" rel="next">`).FindStringSubmatch(body); m != nil {
			next = html.UnescapeString(m[1])
		}
		if page > 3 {
			t.Fatal("more than 3 pages")
		}
	}
	if len(seen) != 120 {
		t.Errorf("the pages listed %d sessions, want 120", len(seen))
	}
	for _, bad := range []string{"/?page=0", "/?page=x", "/?page=1001"} {
		if rec := f.get(t, bad, nil); rec.Code != 400 {
			t.Errorf("GET %s: %d, want 400", bad, rec.Code)
		}
	}
	// Past the end: an empty page, not an error.
	if rec := f.get(t, "/?page=9", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), "No sessions found") {
		t.Errorf("GET /?page=9: %d", rec.Code)
	}
}

// TestHistorySearchFullText: a word said only in the middle of one
// session, in a tool's output, finds it, with the match highlighted; the
// search pages too.
func TestHistorySearchFullText(t *testing.T) {
	srv := manySessions(t, 120)
	f := &fixture{srv: srv}
	rec := f.get(t, "/?q=zanzibar", nil)
	body := rec.Body.String()
	ids := rowID.FindAllStringSubmatch(body, -1)
	if rec.Code != 200 || len(ids) != 1 || ids[0][1] != "s0007-aaaa" {
		t.Fatalf("search zanzibar: %d, rows %v", rec.Code, ids)
	}
	if !strings.Contains(body, "<mark>zanzibar</mark>") || !strings.Contains(body, "1–1 of 1 matches") {
		t.Errorf("the match is not highlighted or counted:\n%s", body)
	}
	// "prompt" is in every session: three pages of matches, with the
	// query kept in the page links.
	rec = f.get(t, "/?q=prompt&page=3", nil)
	body = rec.Body.String()
	if n := len(rowID.FindAllStringSubmatch(body, -1)); n != 20 {
		t.Errorf("page 3 of the matches has %d rows, want 20", n)
	}
	if !strings.Contains(body, `href="/?page=2&amp;q=prompt" rel="prev"`) || strings.Contains(body, `rel="next"`) {
		t.Errorf("page links of the last page of matches are wrong:\n%s", body)
	}
	if rec := f.get(t, "/?q=nowhere-said", nil); !strings.Contains(rec.Body.String(), "No sessions found") {
		t.Error("a word never said found sessions")
	}
}

func TestSnippetParts(t *testing.T) {
	got := snippetParts("abc def ghi", [][2]int{{4, 7}, {2, 5}, {9, 99}, {8, 11}})
	want := []snippetPart{{"abc ", false}, {"def", true}, {" ", false}, {"ghi", true}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("snippetParts = %v, want %v", got, want)
	}
}

// TestSessionPages: a long session's page links to the others and back to
// the history; a page past the end is a 404.
func TestSessionPages(t *testing.T) {
	root := t.TempDir()
	tr := transcript.Transcript{Session: transcript.Session{ID: "long-0001", Title: "long one", PromptCount: 230}}
	for i := range 230 {
		tr.Items = append(tr.Items, transcript.Item{Kind: transcript.UserPrompt, Text: fmt.Sprintf("prompt %d", i+1)},
			transcript.Item{Kind: transcript.AssistantText, Text: "reply"})
	}
	data, _ := json.Marshal(tr)
	if err := os.WriteFile(filepath.Join(root, "long.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenIndex(t.Context(), filepath.Join(t.TempDir(), "muster.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	idx := history.New(st, "test")
	srcs := []transcript.Source{jsonSource{root}}
	if _, err := idx.Refresh(t.Context(), srcs, transcript.Env{}, history.RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Index: idx, Sources: srcs, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: srv}
	rec := f.get(t, "/session/fake/long-0001", nil)
	body := rec.Body.String()
	for _, want := range []string{`<nav class="site"><a href="/">← History</a><a href="/live">Live</a><a href="/stats">Stats</a></nav>`,
		`href="/session/fake/long-0001?page=2" rel="next"`, "page 1 of 3", `id="scene-100"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page 1 lacks %q", want)
		}
	}
	if strings.Contains(body, `id="scene-101"`) {
		t.Error("page 1 shows scene 101")
	}
	rec = f.get(t, "/session/fake/long-0001?page=3", nil)
	if body := rec.Body.String(); rec.Code != 200 || !strings.Contains(body, `id="scene-230"`) || !strings.Contains(body, `href="/session/fake/long-0001?page=2" rel="prev"`) {
		t.Errorf("page 3: %d", rec.Code)
	}
	if rec := f.get(t, "/session/fake/long-0001?page=4", nil); rec.Code != 404 {
		t.Errorf("page 4: %d, want 404", rec.Code)
	}
	if rec := f.get(t, "/session/fake/long-0001?page=-1", nil); rec.Code != 400 {
		t.Errorf("page -1: %d, want 400", rec.Code)
	}
}
