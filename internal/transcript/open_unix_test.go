//go:build unix

package transcript

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenFileNeverWaits: every kind of file but a regular one is refused
// at once, with a reason; a FIFO without a writer would block a plain open
// for good.
func TestOpenFileNeverWaits(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "ok.jsonl")
	os.WriteFile(regular, []byte("{}\n"), 0o600)
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, "loop.jsonl")
	os.Symlink("loop.jsonl", loop)
	link := filepath.Join(dir, "link.jsonl")
	os.Symlink("ok.jsonl", link)
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	f, err := OpenFile(regular)
	if err != nil {
		t.Fatalf("regular file: %v", err)
	}
	f.Close()
	for _, c := range []struct {
		path, want string
		is         error
	}{
		{fifo, "a named pipe", ErrNotRegular},
		{sock, "", nil}, // open(2) of a socket fails with ENXIO
		{dir, "a directory", ErrNotRegular},
		{link, "a symbolic link", ErrSymlink},
		{loop, "symbolic link", nil},
		{"/dev/null", "a character device", ErrNotRegular},
	} {
		f, err := OpenFile(c.path)
		if err == nil {
			f.Close()
			t.Errorf("OpenFile(%s) succeeded", c.path)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("OpenFile(%s) = %v, want %q", c.path, err, c.want)
		}
	}
	// A config file kept as a symlink is followed; a loop still fails.
	if b, err := ReadFileFollow(link, 10); err != nil || string(b) != "{}\n" {
		t.Errorf("ReadFileFollow(link) = %q, %v", b, err)
	}
	if _, err := ReadFileFollow(fifo, 10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFileFollow(fifo) = %v", err)
	}
	if _, err := ReadFile(regular, 2); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("ReadFile over its limit = %v", err)
	}
}
