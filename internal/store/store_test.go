package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestSessionsRoundTrip(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	se := Session{ID: "s1", Name: "api", Provider: "shell", CWD: "/tmp", Argv: []string{"bash"}, Env: map[string]string{"A": "b"}, CreatedAt: now}
	if err := s.InsertSession(t.Context(), se); err != nil {
		t.Fatal(err)
	}
	se.ID = "s2"
	if err := s.InsertSession(t.Context(), se); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("duplicate name: got %v, want ErrNameTaken", err)
	}
	if err := s.InsertSurface(t.Context(), Surface{ID: "f1", SessionID: "s1", PID: 42, State: "running", StartedAt: now}); err != nil {
		t.Fatal(err)
	}
	ids, err := s.ExitOrphans(t.Context(), now)
	if err != nil || len(ids) != 1 || ids[0] != "s1" {
		t.Fatalf("ExitOrphans = %v, %v", ids, err)
	}
	su, err := s.LatestSurface(t.Context(), "s1")
	if err != nil || su.State != "exited" || su.ExitCode != nil || su.PID != 42 {
		t.Fatalf("LatestSurface = %+v, %v", su, err)
	}
	got, err := s.SessionByID(t.Context(), "s1")
	if err != nil || got.Name != "api" || got.Env["A"] != "b" || got.Argv[0] != "bash" {
		t.Fatalf("SessionByID = %+v, %v", got, err)
	}
	if err := s.DeleteSession(t.Context(), "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LatestSurface(t.Context(), "s1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("surface survived its session: %v", err)
	}
}

func TestSessionParentAndSurfaceOwner(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	for _, se := range []Session{
		{ID: "p", Name: "orchestrator", Provider: "shell", CWD: "/tmp", CreatedAt: now},
		{ID: "c", Name: "worker", Provider: "shell", CWD: "/tmp", ParentID: "p", CreatedAt: now},
	} {
		if err := s.InsertSession(t.Context(), se); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.SessionByID(t.Context(), "c"); err != nil || got.ParentID != "p" {
		t.Fatalf("child = %+v, %v; want parent p", got, err)
	}
	if got, err := s.SessionByID(t.Context(), "p"); err != nil || got.ParentID != "" {
		t.Fatalf("parent = %+v, %v; want no parent", got, err)
	}
	for _, id := range []string{"f1", "f2"} {
		if err := s.InsertSurface(t.Context(), Surface{ID: id, SessionID: "c", State: "running", StartedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	if id, err := s.SurfaceSession(t.Context(), "f1"); err != nil || id != "c" {
		t.Fatalf("SurfaceSession(f1) = %q, %v; want c", id, err)
	}
	if _, err := s.SurfaceSession(t.Context(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("SurfaceSession(nope) err = %v, want ErrNotFound", err)
	}
}
