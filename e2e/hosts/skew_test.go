package hosts_test

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

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
// session in it) is reported for what it is: host ls keeps its version
// and session count (the frozen status both speak) and says needs-attention
// with `muster host upgrade h1`; ls, send and attach say which host, what
// cannot be done there and what to run, never `muster daemon restart`,
// which here would restart this machine's daemon.
func TestHostDaemonOfAnotherProtocol(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	old := srv.installPrevious(t)
	e.remoteAs(old, "new", "--name", "keep", "-d", "--cmd", "cat")
	t.Cleanup(func() { e.remoteAs(old, "daemon", "stop", "--force") })

	r := e.run("host", "add", "h1", "h1")
	if r.code == 0 || !strings.Contains(r.stderr, "host h1: its daemon is version "+previousVersion) ||
		!strings.Contains(r.stderr, "muster host upgrade h1") || strings.Contains(r.stderr, "daemon restart") {
		t.Fatalf("host add over a daemon of the previous protocol: exit %d\n%s", r.code, r.stderr)
	}

	h := e.hosts()["h1"]
	if h.State != "needs-attention" || h.Version != previousVersion || h.Sessions != 1 ||
		h.Command != "muster host upgrade h1" || !strings.Contains(h.Reason, "cannot list") {
		t.Fatalf("host ls: %+v", h)
	}

	r = e.run("ls")
	if r.code != 0 || !strings.Contains(r.stdout, "host h1: needs-attention") || !strings.Contains(r.stdout, "run: muster host upgrade h1") {
		t.Fatalf("ls: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = e.run("send", "h1:keep", "hi")
	if r.code == 0 || !strings.Contains(r.stderr, "muster: host h1: its daemon is version "+previousVersion) ||
		!strings.Contains(r.stderr, "cannot list, start, attach to, send to") ||
		!strings.Contains(r.stderr, "muster host upgrade h1") || strings.Contains(r.stderr, "daemon restart") {
		t.Fatalf("send h1:keep: exit %d\n%s", r.code, r.stderr)
	}

	// attach prints the host's refusal on the terminal (the host's muster
	// holds it), then the host's name and what to run.
	cmd := exec.Command(musterBin, "attach", "h1:keep")
	cmd.Env = e.vars
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 100, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	screen, _ := io.ReadAll(ptmx) // EIO once the attach exits
	if err := cmd.Wait(); err == nil || !strings.Contains(string(screen), "muster: host h1: its daemon is version "+previousVersion) ||
		!strings.Contains(string(screen), "muster host upgrade h1") {
		t.Fatalf("attach h1:keep: %v\n%s", err, screen)
	}

	r = e.run("wait", "h1:keep", "--until", "idle", "--timeout", "30s")
	if r.code == 0 || !strings.Contains(r.stderr, "host h1: its daemon is version "+previousVersion) {
		t.Fatalf("wait h1:keep: exit %d\n%s", r.code, r.stderr)
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
	if r := e.run("host", "add", "h1", "h1"); r.code == 0 {
		t.Fatalf("host add over the previous protocol's daemon succeeded:\n%s", r.stdout)
	}

	r := e.run("host", "upgrade", "h1")
	if r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("host upgrade without a terminal: exit %d\n%s", r.code, r.stderr)
	}
	if h := e.hosts()["h1"]; h.State != "needs-attention" || h.Version != previousVersion {
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
