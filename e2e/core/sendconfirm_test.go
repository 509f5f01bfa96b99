package core_test

import (
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/fakeagent/fakeagenttest"
)

// waitBlocked waits until session name's agent shows its approval dialog
// to Muster: the run state (hooks) or the terminal's attention during a
// turn (no hooks).
func (e *env) waitBlocked(name string) proto.SessionInfo {
	e.t.Helper()
	var s proto.SessionInfo
	if !eventually(func() bool {
		s = e.session(name)
		st := ""
		if s.RunState != nil {
			st = *s.RunState
		}
		return st == string(proto.StateWaitingApproval) || st == string(proto.StateRunning) && s.Activity == "attention"
	}) {
		e.t.Fatalf("%s never showed its approval dialog: %+v", name, s)
	}
	return s
}

// refusedBlocked checks that a confirmed send to a blocked agent exits 1
// naming the state and types nothing.
func (e *env) refusedBlocked(name, want string) {
	e.t.Helper()
	r := e.run("send", name, "reply swallowed", "--enter", "--confirm", "--timeout", "5s")
	e.t.Logf("refused: %s", strings.TrimSpace(r.stderr))
	if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "nothing typed") {
		e.t.Errorf("send --confirm to a blocked agent: exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
	if screen := e.must("capture", name); strings.Contains(screen, "swallowed") {
		e.t.Errorf("a refused send typed its text:\n%s", screen)
	}
}

// TestConfirmedSendWithHooks: Claude (the fake) with hooks takes a prompt
// at its prompt, confirmed by the run its UserPromptSubmit hook started;
// --wait-done prints how the turn ended; at an approval dialog the send is
// refused and nothing is typed.
func TestConfirmedSendWithHooks(t *testing.T) {
	e, _ := agentEnv(t)
	e.must("new", "claude", "--name", "cl", "--detach")
	e.waitConfirmed("cl")
	out := e.must("send", "cl", "reply hello", "--enter", "--confirm", "--wait-done")
	if !strings.Contains(out, "cl took the prompt: its run started") || !strings.Contains(out, "UserPromptSubmit") ||
		!strings.Contains(out, "the turn ended: succeeded") {
		t.Errorf("send --confirm --wait-done printed:\n%s", out)
	}
	out = e.must("send", "cl", "tool make test", "--enter", "--confirm", "--json")
	if !strings.Contains(out, `"took": "run-started"`) {
		t.Errorf("send --confirm --json printed:\n%s", out)
	}
	e.waitBlocked("cl")
	e.refusedBlocked("cl", "waits for approval (waitingApproval)")
}

// TestConfirmedSendWithoutHooks: Codex (the fake) with no hooks: the
// native estimator's run (its rollout) confirms the prompt, and its
// approval dialog, known from its terminal (OSC 7501 blocked), refuses
// the send.
func TestConfirmedSendWithoutHooks(t *testing.T) {
	e := newEnv(t)
	dir := fakeagenttest.Build(t)
	e.vars = append(e.vars, "PATH="+fakeagenttest.Path(dir), fakeagenttest.EnvNoHooks+"=1")
	e.must("new", "codex", "--name", "cx", "--detach")
	e.waitScreen("cx", "OpenAI Codex")
	out := e.must("send", "cx", "reply hello", "--enter", "--confirm", "--wait-done")
	if !strings.Contains(out, "cx took the prompt") || !strings.Contains(out, "the turn ended: succeeded") {
		t.Errorf("send --confirm --wait-done without hooks printed:\n%s", out)
	}
	e.must("send", "cx", "tool make test", "--enter", "--confirm")
	e.waitBlocked("cx")
	e.refusedBlocked("cx", "cx: it")
}
