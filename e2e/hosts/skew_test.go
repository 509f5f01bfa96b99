package hosts_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/poll"
	"github.com/musterhq/muster/internal/testing/testbin"
)

// previousVersion is the version of the build that speaks the control
// protocol before this one (tag muster_previous_protocol).
const previousVersion = "0.0.1-previous"

var previous struct {
	once sync.Once
	dir  string
	err  error
}

// previousMuster builds muster and muster-hook speaking the previous
// control protocol, as version previousVersion: a real daemon of another
// protocol for the host to run. GOFLAGS is part of testbin's cache key.
func previousMuster(t *testing.T) string {
	t.Helper()
	previous.once.Do(func() {
		old, had := os.LookupEnv("GOFLAGS")
		os.Setenv("GOFLAGS", "-tags=muster_previous_protocol -ldflags=-X=github.com/musterhq/muster/internal/cli.Version="+previousVersion)
		defer func() {
			if had {
				os.Setenv("GOFLAGS", old)
			} else {
				os.Unsetenv("GOFLAGS")
			}
		}()
		previous.dir, previous.err = testbin.Build(testbin.Spec{Name: "muster-previous-protocol", Packages: []string{"cmd/muster", "cmd/muster-hook"}})
	})
	if previous.err != nil {
		t.Fatalf("build the previous protocol's muster: %v", previous.err)
	}
	return previous.dir
}

// installPrevious puts the previous protocol's muster where host add
// would have put it, owned by the host's user, and returns its path.
func (s *server) installPrevious(t *testing.T) string {
	t.Helper()
	src := previousMuster(t)
	dir := filepath.Join(s.home, ".local/share/muster/bin", previousVersion)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"muster", "muster-hook"} {
		run(t, "cp", filepath.Join(src, name), filepath.Join(dir, name))
	}
	run(t, "chown", "-R", s.user+":", filepath.Join(s.home, ".local"))
	return filepath.Join(dir, "muster")
}

// remoteAs runs a muster of the host's by path, as the host's user.
func (e *env) remoteAs(path string, args ...string) string {
	e.t.Helper()
	cmd := exec.Command("ssh", append([]string{"-F", e.sshConfig, "-o", "BatchMode=yes", "h1", path}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("on h1: %s %v: %v\n%s", path, args, err, out)
	}
	return string(out)
}

// TestHostDaemonOfAnotherProtocol: a host whose daemon runs a build of
// the previous control protocol (a real one, started by that build with a
// session in it) keeps working for everything both protocols speak: host
// add says, in one line naming the host and both versions, what differs
// there (attach relays) and what to run (`muster host upgrade h1`, never
// `muster daemon restart`, which here would restart this machine's
// daemon); host ls shows it connected with the daemon's version; ls, send,
// capture and attach work on its session.
func TestHostDaemonOfAnotherProtocol(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	old := srv.installPrevious(t)
	e.remoteAs(old, "new", "--name", "keep", "-d", "--cmd", "cat")
	t.Cleanup(func() { e.remoteAs(old, "daemon", "stop", "--force") })

	r := e.run("host", "add", "h1", "h1")
	if r.code != 0 || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, "muster: host h1: its daemon is version "+previousVersion+" (control protocol ") ||
		!strings.Contains(r.stderr, "and its muster "+version(e)+" speaks control protocol ") ||
		!strings.Contains(r.stderr, "attach relays") ||
		!strings.Contains(r.stderr, "muster host upgrade h1") || strings.Contains(r.stderr, "daemon restart") {
		t.Fatalf("host add over a daemon of the previous protocol: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	if h := e.hosts()["h1"]; h.State != "connected" || h.Version != previousVersion || h.Sessions != 1 {
		t.Fatalf("host ls: %+v", h)
	}
	if row, ok := find(e.ls(), "h1", "keep"); !ok || row.State != "running" {
		t.Fatalf("ls: h1:keep %+v, %v", row, ok)
	}

	e.must("send", "h1:keep", "sent across versions", "--enter")
	poll.Wait(t, 20*time.Second, func() bool {
		return strings.Count(e.run("capture", "h1:keep").stdout, "sent across versions") == 2
	}, func() string { return "capture h1:keep: " + e.run("capture", "h1:keep").stdout })

	// attach works in the mode both speak: the host's muster relays the
	// terminal instead of handing it to the older daemon.
	tm := startTerm(t, e.vars, 100, 30, "attach", "h1:keep")
	seen := func(s string) bool { return strings.Contains(tm.Since(0), s) }
	poll.Wait(t, 20*time.Second, func() bool { return seen("\x1b[?1049h") || !tm.Running() },
		func() string { return "attach never entered: " + tm.Since(0) })
	tm.Type("typed across versions\r")
	poll.Wait(t, 20*time.Second, func() bool { return seen("typed across versions") || !tm.Running() },
		func() string { return "no echo: " + tm.Since(0) })
	if !tm.Running() {
		t.Fatalf("attach h1:keep exited: %v\n%s", tm.cmd.ProcessState, tm.Since(0))
	}
	tm.Detach(t)
	if out := e.must("capture", "h1:keep"); strings.Count(out, "typed across versions") != 2 {
		t.Fatalf("capture h1:keep after attach:\n%s", out)
	}
}

// TestHostUpgradeKeepsAgents: host upgrade refuses to restart a host's
// daemon without a terminal to ask at unless --yes; with it, it installs
// this muster there and restarts the host's daemon (the previous
// protocol's build) into it with the live handoff: the session's program
// keeps its pid, the host answers again, and host ls shows this version.
func TestHostUpgradeKeepsAgents(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	old := srv.installPrevious(t)
	e.remoteAs(old, "new", "--name", "keep", "-d", "--cmd", "cat")
	var before []struct {
		Name string
		PID  int
	}
	if err := json.Unmarshal([]byte(e.remoteAs(old, "ls", "--json")), &before); err != nil || len(before) != 1 || before[0].PID == 0 {
		t.Fatalf("the previous build's ls: %v %+v", err, before)
	}
	e.must("host", "add", "h1", "h1")

	r := e.run("host", "upgrade", "h1")
	if r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("host upgrade without a terminal: exit %d\n%s", r.code, r.stderr)
	}
	if h := e.hosts()["h1"]; h.Version != previousVersion {
		t.Fatalf("host upgrade without a terminal changed the host: %+v", h)
	}

	r = e.run("host", "upgrade", "h1", "--yes")
	if r.code != 0 || !strings.Contains(r.stderr, "1 pane kept") {
		t.Fatalf("host upgrade --yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var after []struct {
		Host, Name string
		PID        int
	}
	if err := json.Unmarshal([]byte(e.must("ls", "--json", "--host", "h1")), &after); err != nil || len(after) != 1 {
		t.Fatalf("ls --host h1 after the upgrade: %v %+v", err, after)
	}
	if after[0].Name != "keep" || after[0].PID != before[0].PID {
		t.Fatalf("h1:keep after the upgrade: %+v, want pid %d", after[0], before[0].PID)
	}
	if h := e.hosts()["h1"]; h.State != "connected" || h.Version != version(e) || h.Sessions != 1 {
		t.Fatalf("host ls after the upgrade: %+v", h)
	}
	e.must("send", "h1:keep", "still here", "--enter")
	poll.Wait(t, 20*time.Second, func() bool {
		return strings.Count(e.run("capture", "h1:keep").stdout, "still here") == 2
	}, func() string { return "capture h1:keep: " + e.run("capture", "h1:keep").stdout })
	if out := e.must("host", "upgrade", "h1", "--yes"); !strings.Contains(out, "already runs muster "+version(e)) {
		t.Fatalf("a second host upgrade said:\n%s", out)
	}
}
