package codex

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

func TestProcessSession(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs a Linux /proc")
	}
	home := t.TempDir()
	env := transcript.Env{Getenv: func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return ""
	}}
	const id = "01a22c19-5448-7d02-89e7-73b160cc00ef"
	d := filepath.Join(home, "sessions", "2026", "12", "02")
	os.MkdirAll(d, 0o755)
	rollout := filepath.Join(d, "rollout-2026-12-02T00-22-33-"+id+".jsonl")
	other := filepath.Join(home, "history.jsonl")
	for _, f := range []string{rollout, other} {
		os.WriteFile(f, []byte("{}\n"), 0o644)
	}
	hold := func(path string) int {
		cmd := exec.Command("/bin/sh", "-c", `exec 3<"$1"; echo ready; exec sleep 60`, "sh", path)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		bufio.NewReader(out).ReadString('\n')
		return cmd.Process.Pid
	}
	if got := (Provider{}).ProcessSession(env, hold(rollout)); got != id {
		t.Errorf("a process holding the rollout: %q, want %s", got, id)
	}
	if got := (Provider{}).ProcessSession(env, hold(other)); got != "" {
		t.Errorf("a process holding no rollout: %q", got)
	}
	if got := (Provider{}).ProcessSession(env, 0); got != "" {
		t.Errorf("pid 0: %q", got)
	}
	for name, want := range map[string]string{
		"rollout-2026-12-02T00-22-33-" + id + ".jsonl": id,
		"rollout-2026-11-30-" + id + ".json":           "",
		"rollout-x.jsonl":                              "",
		"notes.jsonl":                                  "",
	} {
		if got := rolloutID(name); got != want {
			t.Errorf("rolloutID(%q) = %q, want %q", name, got, want)
		}
	}
}
