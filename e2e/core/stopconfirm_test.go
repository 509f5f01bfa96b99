package core_test

import (
	"strings"
	"testing"
	"time"
)

// TestDaemonStopAsksWhenBusy: with a client attached, `muster daemon stop`
// without a terminal refuses in one line and leaves the daemon running;
// at a terminal it lists the sessions it would end and stops only on yes;
// --force stops without asking.
func TestDaemonStopAsksWhenBusy(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "busy", "--detach", "--cmd", "bash --norc --noprofile")
	e.must("new", "--name", "quiet", "--detach", "--cmd", "bash --norc --noprofile")
	e.must("send", "busy", "echo attached-here", "--enter")
	e.waitScreen("busy", "attached-here")
	c := e.attach("busy", 80, 24, true)
	c.waitScreen("attached-here")
	if !eventually(func() bool { return e.session("busy").Clients == 1 }) {
		t.Fatalf("ls never counted the attached client: %+v", e.session("busy"))
	}
	pid := e.session("quiet").PID

	r := e.run("daemon", "stop")
	if r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("daemon stop without a terminal: exit %d, stderr %q; want a one-line refusal naming --force", r.code, r.stderr)
	}
	if s := e.session("quiet"); s.PID != pid || s.State != "running" {
		t.Fatalf("a refused stop ended a pane: %+v", s)
	}

	no := e.ptyRun(100, 30, true, "daemon", "stop")
	no.waitScreen("[y/N]")
	for _, want := range []string{"ends 2 sessions", "busy (1 attached)", "quiet"} {
		if !strings.Contains(no.screen(), want) {
			t.Errorf("the question does not list %q:\n%s", want, no.screen())
		}
	}
	no.typeText("n\r")
	no.waitScreen("keeps running")
	if s := e.session("quiet"); s.PID != pid || s.State != "running" {
		t.Fatalf("answering no ended a pane: %+v", s)
	}

	yes := e.ptyRun(100, 30, true, "daemon", "stop")
	yes.waitScreen("[y/N]")
	yes.typeText("y\r")
	yes.waitScreen("muster daemon stopped")
	if !eventually(func() bool { return e.run("daemon", "status").code != 0 }) {
		t.Fatal("the daemon still runs after yes")
	}

	// --force asks nothing.
	e.must("new", "--name", "again", "--detach", "--cmd", "bash --norc --noprofile")
	c2 := e.attach("again", 80, 24, true)
	c2.waitScreen("bash")
	if !eventually(func() bool { return e.session("again").Clients == 1 }) {
		t.Fatal("ls never counted the attached client")
	}
	start := time.Now()
	r = e.run("daemon", "stop", "--force")
	if r.code != 0 || strings.Contains(r.stderr, "[y/N]") {
		t.Fatalf("daemon stop --force: exit %d, stderr %q (after %s)", r.code, r.stderr, time.Since(start))
	}
}
