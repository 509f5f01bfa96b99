package core_test

import (
	"fmt"
	"strings"
	"testing"
)

// `muster kill` says what it did, and a mistyped name gets the name that
// was meant.
func TestKillSaysWhatItDidAndNamesAreSuggested(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "claude-1", "--detach", "--cmd", "sleep 600")
	e.must("new", "--name", "web", "--detach", "--cmd", "true")
	pid := e.session("claude-1").PID

	r := e.run("send", "cluade-1", "x")
	if r.code != 1 || !strings.Contains(r.stderr, `no session named "cluade-1"`) || !strings.Contains(r.stderr, "did you mean claude-1?") {
		t.Errorf("send to a mistyped name: exit %d, stderr %q; want a suggestion of claude-1", r.code, r.stderr)
	}
	if r := e.run("capture", "zzz"); strings.Contains(r.stderr, "did you mean") {
		t.Errorf("a name like none was given a suggestion: %q", r.stderr)
	}

	out := e.must("kill", "claude-1")
	if want := "killed claude-1: ended its process group (pid "; !strings.HasPrefix(out, want) || !strings.Contains(out, "removed the session") || !strings.Contains(out, fmt.Sprint(pid)+")") {
		t.Errorf("kill of a running pane printed %q, want %q with pid %d", out, want, pid)
	}
	if !eventually(func() bool { return e.session("web").State == "exited" }) {
		t.Fatal("web never exited")
	}
	if out := e.must("kill", "web"); strings.TrimSpace(out) != "removed web: its process had already exited" {
		t.Errorf("kill of an exited pane printed %q", out)
	}
}
