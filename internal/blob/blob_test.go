package blob

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestPutGet(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "blobs"))
	content := []byte("<html>replay</html>")
	id, err := s.Put(content)
	if err != nil {
		t.Fatal(err)
	}
	if id != ID(content) || len(id) != IDLen {
		t.Fatalf("id = %q, want %q", id, ID(content))
	}
	// Known vector: sha256("abc").
	if got := ID([]byte("abc")); got != "ba7816bf8f01cfea" {
		t.Errorf("ID(abc) = %s", got)
	}
	again, err := s.Put(content)
	if err != nil || again != id {
		t.Fatalf("second Put = %q, %v; want %q", again, err, id)
	}
	b, err := s.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	if string(b.Content) != string(content) || b.SHA256 != Sum(content) {
		t.Errorf("Get = %q %s", b.Content, b.SHA256)
	}
	fi, err := os.Stat(filepath.Join(s.Dir(), id))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("blob file mode %v is writable", fi.Mode())
	}
	entries, _ := os.ReadDir(s.Dir())
	if len(entries) != 1 {
		t.Errorf("blob dir has %d entries, want 1 (temp files left?)", len(entries))
	}
}

func TestGetErrors(t *testing.T) {
	s := New(t.TempDir())
	if _, err := s.Get("0123456789abcdef"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
	if _, err := s.Get("../../etc/passwd"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("malformed id: %v, want a parse error", err)
	}
	// Tamper with a stored blob: reads must refuse it and Put must not
	// replace it.
	content := []byte("original")
	id, err := s.Put(content)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.Dir(), id)
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(id); !errors.Is(err, ErrCorrupt) {
		t.Errorf("tampered blob: %v, want ErrCorrupt", err)
	}
	if _, err := s.Put(content); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Put over tampered blob: %v, want ErrCorrupt", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "tampered" {
		t.Errorf("Put replaced an existing id: %q", got)
	}
}

func TestConcurrentPut(t *testing.T) {
	s := New(t.TempDir())
	content := []byte("same content from many writers")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			id, err := s.Put(content)
			if err == nil && id != ID(content) {
				err = errors.New("wrong id " + id)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestParseID(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"valid", "e4e7da8abf9f2d73", true},
		{"upper case", "E4E7DA8ABF9F2D73", false},
		{"short", "e4e7da8a", false},
		{"long", "e4e7da8abf9f2d731", false},
		{"non hex", "e4e7da8abf9f2d7g", false},
		{"traversal", "../../../../etc/", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseID(tt.in)
			if (err == nil) != tt.ok {
				t.Errorf("ParseID(%q) err = %v, want ok=%v", tt.in, err, tt.ok)
			}
		})
	}
}

func FuzzParseID(f *testing.F) {
	f.Add("e4e7da8abf9f2d73")
	f.Add("../x")
	f.Add("E4E7DA8ABF9F2D73")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			return
		}
		if id != s || len(id) != IDLen {
			t.Fatalf("ParseID(%q) = %q", s, id)
		}
		for _, c := range id {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				t.Fatalf("accepted %q", s)
			}
		}
		if again, err := ParseID(id); err != nil || again != id {
			t.Fatal("not idempotent")
		}
	})
}
