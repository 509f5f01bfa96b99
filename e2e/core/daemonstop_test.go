package core_test

import (
	"strconv"
	"strings"
	"testing"
)

// TestDaemonStopTellsTheTruth: a daemon that is still closing its panes
// when stop's wait ends is killed, and stop says so (issue 22 item 7: it
// said "stopped" while the daemon ran on).
func TestDaemonStopTellsTheTruth(t *testing.T) {
	e := newEnv(t)
	// A program that ignores the hangup keeps the daemon closing its pane
	// for the 2 s grace before it kills it.
	e.must("new", "--name", "a", "--detach", "--cmd", e.script("trap '' HUP TERM; echo ready; while :; do sleep 1; done"))
	e.waitScreen("a", "ready")
	pid := e.daemonPID()
	r := e.run("daemon", "stop", "--force", "--wait", "200ms")
	want := "muster daemon (pid " + strconv.Itoa(pid) + ") did not stop within 200ms; sent SIGKILL, it is gone"
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("daemon stop: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	if pids := e.daemonPIDs(); len(pids) != 0 {
		t.Fatalf("daemons still running after stop: %v", pids)
	}
}
