//go:build unix

package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func wantModes(t *testing.T, dbPath string, want os.FileMode, suffixes ...string) {
	t.Helper()
	for _, suffix := range suffixes {
		fi, err := os.Stat(dbPath + suffix)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(dbPath+suffix), err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s is %#o, want %#o", filepath.Base(dbPath+suffix), got, want)
		}
	}
}

func write(t *testing.T, s *Store, id string) {
	t.Helper()
	se := Session{ID: id, Name: id, Provider: "shell", CWD: "/tmp", Argv: []string{"bash"}, CreatedAt: time.Unix(0, 0)}
	if err := s.InsertSession(t.Context(), se); err != nil {
		t.Fatal(err)
	}
}

// TestDatabaseMode checks the database and its WAL files are created 0600
// even under umask 0, where SQLite alone would make them 0644.
func TestDatabaseMode(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dbPath := filepath.Join(t.TempDir(), "muster.db")
	s, err := Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wantModes(t, dbPath, 0o600, "")
	write(t, s, "s1")
	wantModes(t, dbPath, 0o600, "", "-wal", "-shm")
	if _, err := os.Stat(dbPath + "-journal"); err == nil {
		t.Error("a rollback journal exists beside a WAL database")
	}
}

// TestDatabaseModeTightened opens a database whose files an older version
// left 0644 (while another connection still has them open, as the CLI does
// beside the daemon) and checks they are 0600 afterwards and after writes.
func TestDatabaseModeTightened(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "muster.db")
	first, err := Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	write(t, first, "s1")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Chmod(dbPath+suffix, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	second, err := Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	wantModes(t, dbPath, 0o600, "", "-wal", "-shm")
	write(t, second, "s2")
	write(t, first, "s3")
	wantModes(t, dbPath, 0o600, "", "-wal", "-shm")
	if _, err := second.SessionByID(t.Context(), "s3"); err != nil {
		t.Fatalf("the tightened database lost a write: %v", err)
	}
}

// TestDatabaseModeReopened checks a database closed cleanly (SQLite removes
// the WAL) gets its new WAL files 0600 on the next open.
func TestDatabaseModeReopened(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "muster.db")
	s, err := Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	write(t, s, "s1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dbPath, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write(t, s, "s2")
	wantModes(t, dbPath, 0o600, "", "-wal", "-shm")
}

func TestOpenRefusesNonRegularDatabase(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "muster.db")
	if err := os.Mkdir(dbPath, 0o700); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(t.Context(), dbPath); err == nil {
		s.Close()
		t.Fatal("opened a directory as the database")
	}
}
