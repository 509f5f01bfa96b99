package core_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestControlPaneDrivesEverySession: a pane the user marked as theirs
// (muster new --control, from outside muster) is a control centre, as a
// tmux user lives inside tmux: its shell may send to, capture, attach to
// (nested, with its own detach key) and kill every session. The mark is in
// ls, survives a daemon restart, and no process inside a pane can set it.
func TestControlPaneDrivesEverySession(t *testing.T) {
	e := newEnv(t)
	e.installHookLoop() // muster on the panes' PATH
	e.must("new", "--name", "work", "--detach", "--cmd", "bash --norc --noprofile")
	e.must("new", "--name", "ctl", "--detach", "--control", "--cmd", "bash --norc --noprofile")
	e.waitScreen("ctl", "bash-")
	if !e.session("ctl").Control || e.session("work").Control {
		t.Fatalf("ls --json: ctl %+v work %+v, want only ctl marked", e.session("ctl"), e.session("work"))
	}
	if out := e.must("ls"); !strings.Contains(out, "(control)") {
		t.Errorf("ls does not show the mark:\n%s", out)
	}

	w := func(name string) string { return filepath.Join(t.TempDir(), name) }
	sendRC, newRC, newErr := w("send.rc"), w("new.rc"), w("new.err")
	e.must("send", "ctl", "muster send work 'echo from-ctl-$((6*7))' --enter; echo $? >"+sendRC, "--enter")
	if rc := waitExit(t, sendRC); rc != "0" {
		t.Fatalf("muster send from the control pane: exit %s", rc)
	}
	e.waitScreen("work", "from-ctl-42")

	// A nested attach, with the nested detach key.
	e.must("send", "ctl", "muster attach work; echo attach-rc=$?", "--enter")
	e.waitScreen("ctl", "detach it with ctrl-]")
	e.must("send", "ctl", "--keys", "C-]")
	e.waitScreen("ctl", "attach-rc=0")

	// Not even a control pane makes another one.
	e.must("send", "ctl", "muster new --name sneaky --control --cmd true 2>"+newErr+"; echo $? >"+newRC, "--enter")
	if rc, msg := waitExit(t, newRC), waitFile(t, newErr); rc != "1" || !strings.Contains(msg, "may not make a control pane") {
		t.Errorf("muster new --control inside a pane: exit %s, stderr %q", rc, msg)
	}

	// The mark survives a restart.
	e.must("daemon", "stop", "--force")
	e.must("resume", "--all")
	if !e.session("ctl").Control {
		t.Errorf("the mark did not survive a restart: %+v", e.session("ctl"))
	}
	e.waitScreen("ctl", "bash-")
	killRC := w("kill.rc")
	e.must("send", "ctl", "muster kill work; echo $? >"+killRC, "--enter")
	if rc := waitExit(t, killRC); rc != "0" {
		t.Errorf("muster kill from the control pane: exit %s", rc)
	}
}
