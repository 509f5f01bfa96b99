package core_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/fakeagent/fakeagenttest"
)

func TestTerminalActivityInLs(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "act", "--detach", "--cmd", "bash --norc --noprofile")
	activity := func(want string) {
		t.Helper()
		var got string
		if !eventually(func() bool { got = e.session("act").Activity; return got == want }) {
			t.Fatalf("activity = %q, want %q", got, want)
		}
	}
	e.must("send", "act", `printf '\033]9;4;3\007'`, "--enter")
	activity("working")
	if p := e.session("act").ActivityPercent; p != nil {
		t.Errorf("an indeterminate bar has the value %d", *p)
	}
	// A bar with a value: ls shows the value, and its moves.
	for _, v := range []int{42, 43} {
		e.must("send", "act", fmt.Sprintf(`printf '\033]9;4;1;%d\007'`, v), "--enter")
		var got *int
		if !eventually(func() bool { got = e.session("act").ActivityPercent; return got != nil && *got == v }) {
			t.Fatalf("activity percent = %v, want %d", got, v)
		}
	}
	e.must("send", "act", `printf '\033]9;4;0\007'`, "--enter")
	activity("waiting")
	e.must("send", "act", `printf '\033]777;notify;Build;done\007'`, "--enter")
	activity("attention")
	if ev := e.session("act").ActivityEvidence; ev == "" {
		t.Errorf("activity has no evidence")
	}
}

// Without hooks, a Claude started by hand in a shell pane is still seen:
// idle at its prompt it has no run (issue 10: not running), and each
// prompt turn its transcript records is a run.
func TestNativeRunEstimationWithoutHooks(t *testing.T) {
	e := newEnv(t)
	dir := fakeagenttest.Build(t)
	e.vars = append(e.vars, "PATH="+fakeagenttest.Path(dir), fakeagenttest.EnvNoHooks+"=1")
	e.must("new", "--name", "nat", "--detach", "--cmd", "bash --norc --noprofile")
	e.must("send", "nat", "claude", "--enter")
	if !eventually(func() bool { return strings.Contains(e.must("capture", "nat"), "Claude Code v") }) {
		t.Fatalf("the fake claude did not show its prompt:\n%s", e.must("capture", "nat"))
	}
	if s := e.session("nat"); s.RunState != nil {
		t.Errorf("claude idle at its prompt has run state %q, want none", *s.RunState)
	}
	e.must("send", "nat", "reply estimated", "--enter")
	e.must("wait", "nat", "--until", "done", "--timeout", "30s")
	s := e.session("nat")
	if s.RunState == nil || s.RunID == nil {
		t.Fatalf("no run state from native estimation: %+v", s)
	}
	out := e.must("explain", "nat")
	if !strings.Contains(out, "muster.native.turn") {
		t.Errorf("explain does not show native evidence:\n%s", out)
	}
}
