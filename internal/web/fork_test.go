package web

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/transcript"
)

// TestForkRow: a fork is its own row in the history list, marked and
// naming its original; the original is not marked.
func TestForkRow(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for name, s := range map[string]transcript.Session{
		"orig.json": {ID: "orig-1111", Title: "the original", PromptCount: 2, StartedAt: t0},
		"fork.json": {ID: "fork-2222", Title: "the fork", PromptCount: 1, StartedAt: t0.Add(time.Minute), ForkedFrom: "orig-1111"},
	} {
		data, _ := json.Marshal(transcript.Transcript{Session: s, Items: []transcript.Item{{Kind: transcript.UserPrompt, Text: "p"}}})
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
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
	body := (&fixture{srv: srv}).get(t, "/", nil).Body.String()
	var fork, orig string
	for _, row := range strings.Split(body, "<tr>") {
		switch {
		case strings.Contains(row, "the fork"):
			fork = row
		case strings.Contains(row, "the original"):
			orig = row
		}
	}
	if !strings.Contains(fork, `title="forked from fake:orig-1111">⑂</span>`) {
		t.Errorf("the fork's row is not marked with its original:\n%s", fork)
	}
	if orig == "" || strings.Contains(orig, "⑂") {
		t.Errorf("the original's row is missing or marked as a fork:\n%s", orig)
	}
}
