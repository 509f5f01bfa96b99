package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/iostreams"
)

// TestConfigIsReadOnce: a command reads config.toml once, so that two
// parts of one attach (its keys, its mouse) cannot see two versions of
// the file, and Factory.Config is the only reader in this package.
func TestConfigIsReadOnce(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"MUSTER_HOME": home}
	f := &Factory{IO: func() *iostreams.IOStreams { ios, _, _, _ := iostreams.Test(); return ios }(), Getenv: func(k string) string { return env[k] }}
	path := filepath.Join(home, "config", "config.toml")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte("[keys]\ndetach = \"ctrl-]\"\n"), 0o600)
	first, err := f.Config()
	if err != nil || first.Keys.Detach != "ctrl-]" {
		t.Fatalf("Config() = %+v, %v", first.Keys, err)
	}
	os.WriteFile(path, []byte("[keys]\ndetach = \"ctrl-a\"\n"), 0o600)
	if again, _ := f.Config(); again.Keys.Detach != "ctrl-]" {
		t.Errorf("the second call read the file again: %q", again.Keys.Detach)
	}
	srcs, _ := filepath.Glob("*.go")
	for _, src := range srcs {
		if strings.HasSuffix(src, "_test.go") {
			continue
		}
		b, _ := os.ReadFile(src)
		if n := strings.Count(string(b), "config.Load("); n > 0 && src != "cli.go" {
			t.Errorf("%s calls config.Load %d times; use Factory.Config", src, n)
		}
	}
}
