//go:build unix

package paths

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEnsureStateMode(t *testing.T) {
	root := t.TempDir()
	fresh := Dirs{State: filepath.Join(root, "new", "state")}
	old := Dirs{State: filepath.Join(root, "old")}
	if err := os.Mkdir(old.State, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old.State, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []Dirs{fresh, old} {
		if err := d.EnsureState(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(d.State)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o700 {
			t.Errorf("%s is %#o, want 0700", d.State, got)
		}
	}
	file := Dirs{State: filepath.Join(root, "file")}
	if err := os.WriteFile(file.State, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := file.EnsureState(); err == nil {
		t.Error("EnsureState accepted a file")
	}
}
