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

// TestResumeOfALiveConversationRefused (issue 23 item 8): `muster new
// --resume` of the conversation a live pane runs refuses, naming the
// pane, and starts nothing; --force starts a second agent on it.
func TestResumeOfALiveConversationRefused(t *testing.T) {
	e, log := agentEnv(t)
	work := t.TempDir()
	e.must("new", "claude", "--name", "cl", "--dir", work, "--detach")
	id := e.waitConfirmed("cl")
	e.must("send", "cl", "reply hello there", "--enter")
	e.must("wait", "cl", "--until", "done", "--timeout", "30s")
	before := len(invocations(t, log, "claude"))
	r := e.run("new", "--resume", "claude:"+id, "--name", "again", "--detach")
	if r.code == 0 || !strings.Contains(r.stderr, "already open in pane cl") || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("resume of a live conversation: exit %d, stdout %q, stderr %q; want a refusal naming cl and --force", r.code, r.stdout, r.stderr)
	}
	if n := len(invocations(t, log, "claude")); n != before || len(e.ls()) != 1 {
		t.Errorf("the refusal started something: %d claude launches (was %d), %d sessions", n, before, len(e.ls()))
	}
	e.must("new", "--resume", "claude:"+id, "--name", "again", "--detach", "--force")
	if !eventually(func() bool { return len(invocations(t, log, "claude")) == before+1 }) {
		t.Fatal("--force did not start the second agent")
	}
}
