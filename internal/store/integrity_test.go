package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenMovesCorruptAside: each kind of broken database is moved aside
// with its reason and a new one created, never opened as if empty; a
// path that is not a file is refused without being opened or moved.
func TestOpenMovesCorruptAside(t *testing.T) {
	good := func(t *testing.T, path string) []byte {
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 200 {
			if err := s.InsertSession(t.Context(), Session{ID: "s" + string(rune('a'+i%26)) + strings.Repeat("x", i), Name: "n" + strings.Repeat("y", i), Provider: "shell", CWD: "/tmp"}); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name, why string
		breakIt   func(b []byte) []byte
	}{
		{"empty", "empty (zero length)", func([]byte) []byte { return nil }},
		{"short", "shorter than a database header", func(b []byte) []byte { return b[:50] }},
		{"truncated", "truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"foreign", "not a SQLite database", func(b []byte) []byte { return []byte(strings.Repeat("not a database\n", 500)) }},
		{"malformed", "malformed", func(b []byte) []byte {
			// Every page but the first (the header and the schema) is
			// overwritten: the tables' pages are garbage.
			for i := 4096; i < len(b); i++ {
				b[i] = 0xA5
			}
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.db")
			b := good(t, path)
			os.Remove(path + "-wal")
			os.Remove(path + "-shm")
			if err := os.WriteFile(path, tc.breakIt(b), 0o600); err != nil {
				t.Fatal(err)
			}
			broken, _ := os.ReadFile(path)
			s, err := Open(t.Context(), path)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			r := s.Recovered
			if r == nil || !strings.Contains(r.Why, tc.why) {
				t.Fatalf("Recovered = %+v; want the database moved aside because %q", r, tc.why)
			}
			kept, err := os.ReadFile(r.Backup)
			if err != nil || string(kept) != string(broken) {
				t.Fatalf("backup %s: %v; want the broken file kept as it was", r.Backup, err)
			}
			if !strings.Contains(r.Notice(), r.Backup) {
				t.Errorf("notice %q does not name the backup", r.Notice())
			}
			if got, err := s.Sessions(t.Context()); err != nil || len(got) != 0 {
				t.Errorf("new database: %d sessions, %v", len(got), err)
			}
		})
	}
	t.Run("fifo", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.db")
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(t.Context(), path); err == nil || !strings.Contains(err.Error(), "not a regular file but a FIFO") {
			t.Fatalf("Open of a FIFO = %v; want it refused", err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("the FIFO was moved: %v", err)
		}
	})
	t.Run("healthy", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.db")
		good(t, path)
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if s.Recovered != nil {
			t.Fatalf("a healthy database was moved aside: %+v", s.Recovered)
		}
		if got, _ := s.Sessions(t.Context()); len(got) != 200 {
			t.Errorf("%d sessions; want 200", len(got))
		}
	})
}
