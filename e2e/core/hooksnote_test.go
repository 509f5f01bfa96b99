package core_test

import (
	"strings"
	"testing"
)

// TestNewSaysHooksAreMissing (issue 23): `muster new` for an agent whose
// hooks are neither injected nor installed says so in one line, with the
// command that installs them; once installed, or for Claude Code (its
// hooks ride on --settings), it says nothing.
func TestNewSaysHooksAreMissing(t *testing.T) {
	e, _ := agentEnv(t)
	const want = "codex hooks are not installed: its state is read from its terminal and transcript only; install them with `muster hooks setup codex`"
	r := e.run("new", "codex", "--name", "cx", "--detach")
	if r.code != 0 || strings.TrimSpace(r.stderr) != want {
		t.Errorf("new codex without hooks: exit %d, stderr %q; want the one line %q", r.code, r.stderr, want)
	}
	if r := e.run("new", "claude", "--name", "cl", "--detach"); r.code != 0 || r.stderr != "" {
		t.Errorf("new claude (hooks injected): exit %d, stderr %q; want nothing", r.code, r.stderr)
	}
	e.must("hooks", "setup", "codex")
	if r := e.run("new", "codex", "--name", "cx2", "--detach"); r.code != 0 || r.stderr != "" {
		t.Errorf("new codex with hooks installed: exit %d, stderr %q; want nothing", r.code, r.stderr)
	}
}
