package history

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

func ids(ss []transcript.Session) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	slices.Sort(out)
	return out
}

func TestRefresh(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	src := &testSource{name: "fake", roots: []string{root}}
	for i := range 40 {
		writeSession(t, filepath.Join(root, "p"+string(rune('a'+i%4)), sessionName(i)+".sess"),
			testSession{ID: sessionName(i), Title: "task", Prompts: 1, Started: t0.Add(time.Duration(i) * time.Hour)})
	}
	x := openIndex(t, "v1")
	srcs := []transcript.Source{src}

	// Cold: every file parsed once, in full (the full-text rows need its items).
	st, err := x.Refresh(ctx, srcs, transcript.Env{}, RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Parsed != 40 || st.Files != 40 || src.parses.Load() != 40 || src.fullParses.Load() != 40 {
		t.Fatalf("cold refresh: %+v, parses %d full %d", st, src.parses.Load(), src.fullParses.Load())
	}
	if x.Changes() != 1 {
		t.Errorf("Changes after a refresh that wrote = %d, want 1", x.Changes())
	}

	// Warm: nothing parsed.
	st, err = x.Refresh(ctx, srcs, transcript.Env{}, RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Parsed != 0 || st.Unchanged != 40 || src.parses.Load() != 40 {
		t.Fatalf("warm refresh: %+v, parses %d", st, src.parses.Load())
	}
	if x.Changes() != 1 {
		t.Errorf("Changes after a refresh that wrote nothing = %d, want 1", x.Changes())
	}

	// A changed file (same size, new mtime) is parsed again, alone.
	changed := filepath.Join(root, "pa", sessionName(0)+".sess")
	writeSession(t, changed, testSession{ID: sessionName(0), Title: "TASK", Prompts: 1, Started: t0})
	if err := os.Chtimes(changed, t0, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// A grown file with the old mtime is parsed again too.
	grown := filepath.Join(root, "pb", sessionName(1)+".sess")
	fi, _ := os.Stat(grown)
	writeSession(t, grown, testSession{ID: sessionName(1), Title: "a longer title", Prompts: 3, Started: t0})
	os.Chtimes(grown, fi.ModTime(), fi.ModTime())
	// A vanished file drops out.
	gone := filepath.Join(root, "pc", sessionName(2)+".sess")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	src.parsed = nil
	st, err = x.Refresh(ctx, srcs, transcript.Env{}, RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(src.parsed)
	if st.Parsed != 2 || st.Removed != 1 || st.Unchanged != 37 || !slices.Equal(src.parsed, []string{changed, grown}) {
		t.Fatalf("refresh after changes: %+v, parsed %v", st, src.parsed)
	}
	if x.Changes() != 2 {
		t.Errorf("Changes after a refresh that wrote = %d, want 2", x.Changes())
	}
	all, err := x.List(ctx, Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 39 || slices.Contains(ids(all), sessionName(2)) {
		t.Fatalf("List has %d sessions (vanished one present: %v)", len(all), slices.Contains(ids(all), sessionName(2)))
	}
	got, _ := x.List(ctx, Query{Search: "longer"})
	if len(got) != 1 || got[0].PromptCount != 3 {
		t.Fatalf("changed summary not stored: %+v", got)
	}

	// Another parser version re-parses everything.
	x2 := New(x.Store(), "v2")
	st, err = x2.Refresh(ctx, srcs, transcript.Env{}, RefreshOptions{})
	if err != nil || st.Parsed != 39 {
		t.Fatalf("refresh under a new version: %+v %v", st, err)
	}

	// So does a new parsers revision under the same build version (a
	// development build's never changes): here, rows as an index of the
	// same build before the revision wrote them (its listing digests
	// hashed that version too).
	for _, q := range []string{`UPDATE history_files SET version = 'v2'`, `UPDATE history_digests SET digest = 'v2'`} {
		if _, err := x2.Store().W.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	st, err = x2.Refresh(ctx, srcs, transcript.Env{}, RefreshOptions{})
	if err != nil || st.Parsed != 39 {
		t.Fatalf("refresh under a new parsers revision: %+v %v", st, err)
	}
}

func TestRefreshDiscoverErrorKeepsRows(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	src := &testSource{name: "fake", roots: []string{root}}
	writeSession(t, filepath.Join(root, "a.sess"), testSession{ID: "a", Prompts: 1, Started: t0})
	x := openIndex(t, "v1")
	if _, err := x.Refresh(ctx, []transcript.Source{src}, transcript.Env{}, RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	src.discoverErr = errors.New("permission denied")
	st, err := x.Refresh(ctx, []transcript.Source{src}, transcript.Env{}, RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Removed != 0 || len(st.Errors) != 1 {
		t.Fatalf("refresh with a failing discovery: %+v", st)
	}
	if n, _ := x.Count(ctx, Query{}); n != 1 {
		t.Fatalf("rows of a failing source were dropped: %d left", n)
	}
}

func TestRefreshUnreadableRetried(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	src := &testSource{name: "fake", roots: []string{root}}
	p := filepath.Join(root, "a.sess")
	writeSession(t, p, testSession{ID: "a", Prompts: 1, Started: t0})
	src.setUnreadable(p, true)
	x := openIndex(t, "v1")
	st, _ := x.Refresh(ctx, []transcript.Source{src}, transcript.Env{}, RefreshOptions{})
	if st.Failed != 1 {
		t.Fatalf("unreadable file: %+v", st)
	}
	src.setUnreadable(p, false)
	st, _ = x.Refresh(ctx, []transcript.Source{src}, transcript.Env{}, RefreshOptions{})
	if st.Parsed != 1 {
		t.Fatalf("unreadable file was not retried: %+v", st)
	}
}

func TestRefreshAnalyzer(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	src := &testSource{name: "fake", roots: []string{root}}
	writeSession(t, filepath.Join(root, "a.sess"), testSession{ID: "a", Prompts: 1, Tools: []string{"Bash", "Bash", "Edit"}, Started: t0})
	writeSession(t, filepath.Join(root, "b.sess"), testSession{ID: "b", Prompts: 1, Started: t0})
	x := openIndex(t, "v1")
	srcs := []transcript.Source{src}
	if _, err := x.Refresh(ctx, srcs, transcript.Env{}, RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	countTools := func(v int) *Analyzer {
		return &Analyzer{Version: v, Analyze: func(t *transcript.Transcript) (Analysis, error) {
			n := 0
			for _, it := range t.Items {
				if it.Kind == transcript.ToolUse {
					n++
				}
			}
			b, err := json.Marshal(n)
			return Analysis{Brief: b, Full: append([]byte("full "), b...)}, err
		}}
	}
	// Summaries exist but analyses do not: both files parse (in full, as
	// every refresh does for the full-text rows) again.
	st, err := x.Refresh(ctx, srcs, transcript.Env{}, RefreshOptions{Analyzer: countTools(1)})
	if err != nil || st.Parsed != 2 || src.fullParses.Load() != 4 {
		t.Fatalf("first analysis: %+v %v full=%d", st, err, src.fullParses.Load())
	}
	st, _ = x.Refresh(ctx, srcs, transcript.Env{}, RefreshOptions{Analyzer: countTools(1)})
	if st.Parsed != 0 {
		t.Fatalf("analysis redone without a change: %+v", st)
	}
	// A summary-only refresh keeps the analyses.
	x.Refresh(ctx, srcs, transcript.Env{}, RefreshOptions{})
	got, err := x.ListAnalyzed(ctx, Query{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	var ptrs []*Analyzed
	for i, a := range got {
		byID[a.Session.ID] = string(a.Brief)
		ptrs = append(ptrs, &got[i])
	}
	if byID["a"] != "3" || byID["b"] != "0" {
		t.Fatalf("analyses = %v", byID)
	}
	if err := LoadFull(ctx, ptrs); err != nil {
		t.Fatal(err)
	}
	for _, a := range got {
		if string(a.Full) != "full "+string(a.Brief) {
			t.Errorf("%s: full analysis %q for brief %q", a.Session.ID, a.Full, a.Brief)
		}
	}
	st, _ = x.Refresh(ctx, srcs, transcript.Env{}, RefreshOptions{Analyzer: countTools(2)})
	if st.Parsed != 2 {
		t.Fatalf("new analyzer version did not re-analyse: %+v", st)
	}
}

func TestList(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	a := &testSource{name: "alpha", roots: []string{filepath.Join(root, "a")}}
	b := &testSource{name: "beta", roots: []string{filepath.Join(root, "b")}}
	writeSession(t, filepath.Join(root, "a", "1.sess"), testSession{ID: "a1", Title: "Fix the Ünicode bug", Prompts: 2, Started: t0})
	writeSession(t, filepath.Join(root, "a", "2.sess"), testSession{ID: "a2", Title: "write docs", CWD: "/src/proj", Prompts: 1, Started: t0.Add(48 * time.Hour)})
	writeSession(t, filepath.Join(root, "a", "3.sess"), testSession{ID: "a3", Title: "empty", Started: t0.Add(72 * time.Hour)})
	writeSession(t, filepath.Join(root, "b", "1.sess"), testSession{ID: "b1", Title: "beta work", Tools: []string{"Read"}, Model: "gpt-5", Started: t0.Add(24 * time.Hour)})
	x := openIndex(t, "v1")
	if _, err := x.Refresh(ctx, []transcript.Source{a, b}, transcript.Env{}, RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		q    Query
		want []string // in order
	}{
		{"all newest first", Query{}, []string{"a2", "b1", "a1"}},
		{"empty included", Query{IncludeEmpty: true}, []string{"a3", "a2", "b1", "a1"}},
		{"provider", Query{Provider: "beta"}, []string{"b1"}},
		{"search title any case", Query{Search: "ünICODE"}, []string{"a1"}},
		{"search cwd", Query{Search: "/src/proj"}, []string{"a2"}},
		{"search model", Query{Search: "GPT-5"}, []string{"b1"}},
		{"search id", Query{Search: "a1"}, []string{"a1"}},
		{"search percent is literal", Query{Search: "%"}, nil},
		{"since", Query{Since: t0.Add(24 * time.Hour)}, []string{"a2", "b1"}},
		{"limit", Query{Limit: 1}, []string{"a2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x.List(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var gotIDs []string
			for _, s := range got {
				gotIDs = append(gotIDs, s.ID)
			}
			if !slices.Equal(gotIDs, tt.want) {
				t.Errorf("got %v, want %v", gotIDs, tt.want)
			}
		})
	}
}
