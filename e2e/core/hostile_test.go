package core_test

import (
	"strings"
	"testing"
)

// TestHostileOutputCannotWedgeTheDaemon prints the counts that once held
// the daemon at a full core for seconds a sequence (issue 22: thirteen
// bytes of REP took 14 s, and a loop of them never ended), in a loop, in
// one pane: that pane and another stay answerable, and kill ends it.
func TestHostileOutputCannotWedgeTheDaemon(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "calm", "--detach", "--cmd", "bash --norc --noprofile")
	e.waitScreen("calm", "bash-")
	e.must("new", "--name", "rep", "--detach", "--cmd",
		`bash -c 'printf "A\e[999999999b\e[999999999X\e[999999999I\e[999999999Z"; echo hostile-printed; while :; do printf "\e[999999999S\e[H\e[999999999@A\e[999999999b"; done'`)
	e.waitScreen("rep", "A")
	e.must("send", "calm", "echo still-here", "--enter")
	e.waitScreen("calm", "still-here")
	// The loop blanks the screen (S) before it prints A again, so one
	// capture may land in between: the pane must answer every time and
	// show the A again soon, not on any one capture.
	if r := e.run("capture", "rep"); r.code != 0 {
		t.Fatalf("capture of the hostile pane: code %d %s", r.code, r.stderr)
	}
	e.waitScreen("rep", "A")
	if r := e.run("kill", "rep"); r.code != 0 {
		t.Fatalf("kill of the hostile pane: code %d %s", r.code, r.stderr)
	}
	if r := e.run("capture", "calm"); r.code != 0 || !strings.Contains(r.stdout, "still-here") {
		t.Fatalf("capture of the other pane: code %d %s", r.code, r.stderr)
	}
}
