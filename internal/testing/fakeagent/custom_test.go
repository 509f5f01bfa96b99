package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/testing/fakeagent/fakeagenttest"
)

func TestCustom(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, fakeagenttest.EnvHome+"="+filepath.Join(w.home, "fa"))
	script := filepath.Join(w.home, "script.txt")
	writeFile(t, script, "# warm up\nreply scripted\n\n")
	p := w.start(w.repo, "fakeagent", []string{"--session-id", "conv-1", "--hook", hookCmd, "--script", script})
	p.expect("\x1b]9;4;3;\x07")
	p.expect("scripted")
	p.expect("\x1b]9;4;0;\x07")
	p.send("tool make\r")
	p.expect("\x1b]9;fakeagent needs your approval\x07")
	p.send("y")
	p.expect("ok")
	p.send("clear\r")
	p.expect("new session")
	p.send("exit\r")
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	ps := w.payloads()
	if len(ps) != 2 {
		t.Fatalf("captures = %v, want 2", ps)
	}
	for _, c := range ps {
		if c["version"] != float64(1) || c["event"] != "session_started" || len(c) != 3 {
			t.Errorf("capture payload %v is not canonical v1", c)
		}
	}
	if str(ps[0], "session_id") != "conv-1" || str(ps[1], "session_id") == "conv-1" {
		t.Errorf("session ids %q then %q", str(ps[0], "session_id"), str(ps[1], "session_id"))
	}
	inv := w.invocations()
	if len(inv) != 1 || inv[0].Persona != "custom" {
		t.Errorf("invocations = %+v", inv)
	}

	// Resume: the known session resumes and captures again; an unknown
	// one is refused.
	p = w.start(w.repo, "fakeagent", []string{"--resume", "conv-1", "--hook", hookCmd})
	p.expect("session conv-1")
	p.send("exit\r")
	p.wait()
	if ps := w.payloads(); len(ps) != 3 || str(ps[2], "session_id") != "conv-1" {
		t.Errorf("captures after resume = %v", ps)
	}
	p = w.start(w.repo, "fakeagent", []string{"--resume", "conv-2"})
	p.expect("no session conv-2")
	if code := p.wait(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	// --persona picks a provider whatever the executable is called.
	p = w.start(w.repo, "fakeagent", []string{"--persona", "codex", "--version"})
	p.expect("codex-cli 0.169.0")
	p.wait()
	if inv := w.invocations(); !slices.ContainsFunc(inv, func(i fakeagenttest.Invocation) bool { return i.Persona == "codex" }) {
		t.Errorf("no codex invocation logged: %+v", inv)
	}
}
