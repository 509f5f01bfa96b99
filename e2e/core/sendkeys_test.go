package core_test

import (
	"strings"
	"testing"
)

// TestSendKeys types tmux key names into a real pane: cat -v shows the
// bytes they became, C-c interrupts a command, and an unknown name sends
// nothing.
func TestSendKeys(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "k", "--detach", "--cmd", "bash --norc --noprofile")
	e.must("send", "k", "sleep 100", "--enter")
	e.waitScreen("k", "sleep 100")
	e.must("send", "k", "--keys", "C-c")
	e.must("send", "k", "echo after-ctrl-c")
	e.must("send", "k", "--keys", "Space", "o", "k", "Enter")
	e.waitScreen("k", "after-ctrl-c ok\n")
	e.must("send", "k", "cat -v", "--enter")
	e.must("send", "k", "--keys", "Up", "Escape", "M-x", "C-Left", "F5", "Enter")
	e.waitScreen("k", "^[[A^[^[x^[[1;5D^[[15~")

	r := e.run("send", "k", "--keys", "Enter", "Bogus")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown key name "Bogus"`) {
		t.Fatalf("unknown key: exit %d, stderr %q", r.code, r.stderr)
	}
	e.must("send", "k", "--keys", "C-d")
	// The refused command sent nothing, not even its valid Enter (which
	// would leave an empty line before the shell's prompt). Waiting for
	// that prompt also keeps the next keys from arriving while cat exits:
	// the terminal would echo them ahead of the prompt.
	screen := e.waitScreen("k", "^[[15~\nbash")
	if strings.Contains(screen, "Bogus") {
		t.Errorf("unexpected screen:\n%s", screen)
	}
	e.must("send", "k", "echo done-$((6*7))", "--enter")
	e.waitScreen("k", "done-42")
}
