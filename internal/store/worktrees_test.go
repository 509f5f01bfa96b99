package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestWorktreesRoundTrip(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)
	w := Worktree{Path: "/src/app.worktrees/feat", SessionID: "s1", Repo: "/src/app", Branch: "feat", BaseCommit: "abc123", CreatedBranch: true, CreatedAt: at}
	if err := s.InsertWorktree(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertWorktree(t.Context(), Worktree{Path: w.Path, SessionID: "s2", CreatedAt: at}); !errors.Is(err, ErrWorktreeTaken) {
		t.Errorf("a second session took the same path: %v", err)
	}
	got, err := s.WorktreeByPath(t.Context(), w.Path)
	if err != nil || got != w {
		t.Errorf("WorktreeByPath = %+v, %v; want %+v", got, err, w)
	}
	if list, err := s.Worktrees(t.Context()); err != nil || len(list) != 1 {
		t.Errorf("Worktrees = %+v, %v", list, err)
	}
	if err := s.DeleteWorktree(t.Context(), w.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorktreeByPath(t.Context(), w.Path); !errors.Is(err, ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
	if ok, err := s.HasSetupConsent(t.Context(), "/src/app", "h1"); ok || err != nil {
		t.Errorf("consent before any: %v %v", ok, err)
	}
	s.AddSetupConsent(t.Context(), "/src/app", "h1", at)
	if ok, _ := s.HasSetupConsent(t.Context(), "/src/app", "h1"); !ok {
		t.Error("consent not recorded")
	}
	if ok, _ := s.HasSetupConsent(t.Context(), "/src/app", "h2"); ok {
		t.Error("consent to one content counts for another")
	}
}
