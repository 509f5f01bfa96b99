package core_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAttachInsideTmux drives `muster attach` inside a real tmux, the way a
// user in tmux would, and reads the screen back with capture-pane.
func TestAttachInsideTmux(t *testing.T) {
	tmuxBin, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is required for this test: apt-get install -y tmux (.ci/run installs it)")
	}
	e := newEnv(t)
	e.must("new", "--name", "tm", "--detach", "--cmd", "bash --norc --noprofile")
	e.must("send", "tm", "printf 'before-%s\\n' attach", "--enter")
	e.waitScreen("tm", "before-attach")

	sock := "muster-test-" + strings.TrimPrefix(e.home, "/tmp/")
	tmux := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(tmuxBin, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = e.vars
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", "m", "-x", "100", "-y", "30", "bash --norc --noprofile")
	tmux("send-keys", "-t", "m", musterBin+" attach tm", "Enter")
	t.Cleanup(func() { exec.Command(tmuxBin, "-L", sock, "kill-server").Run() })

	screen := func() string { return tmux("capture-pane", "-p", "-t", "m") }
	waitTmux := func(want string) string {
		t.Helper()
		var s string
		if !eventually(func() bool { s = screen(); return strings.Contains(s, want) }) {
			t.Fatalf("tmux pane never showed %q:\n%s", want, s)
		}
		return s
	}
	waitTmux("before-attach")
	tmux("send-keys", "-t", "m", "printf 'typed-%s\\n' in-tmux", "Enter")
	waitTmux("typed-in-tmux")
	// The pane got tmux's size.
	tmux("send-keys", "-t", "m", "stty size", "Enter")
	waitTmux("30 100")

	// Detach with Ctrl-\ and come back: the screen is repainted.
	tmux("send-keys", "-t", "m", `C-\`)
	waitTmux("[detached from tm]")
	tmux("send-keys", "-t", "m", musterBin+" attach tm", "Enter")
	s := waitTmux("typed-in-tmux")
	if !strings.Contains(s, "before-attach") {
		t.Errorf("re-attach in tmux lost earlier output:\n%s", s)
	}
	tmux("send-keys", "-t", "m", `C-\`)
	waitTmux("[detached from tm]")

	// On a terminal, `muster new` attaches at once.
	tmux("send-keys", "-t", "m", "clear; "+musterBin+" new --name fresh --cmd 'bash --norc --noprofile'", "Enter")
	tmux("send-keys", "-t", "m", "printf 'inside-%s\\n' fresh", "Enter")
	waitTmux("inside-fresh")
	tmux("send-keys", "-t", "m", `C-\`)
	waitTmux("[detached from fresh]")
	if e.session("fresh").State != "running" {
		t.Errorf("the new session should keep running after detach")
	}
}
