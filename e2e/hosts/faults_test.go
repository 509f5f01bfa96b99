package hosts_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/poll"
)

// master is the pid of the host's ssh ControlMaster, 0 when none runs.
func (e *env) master(name string) int {
	sock := filepath.Join(e.home, "run", "ssh", name)
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		argv := strings.Split(string(b), "\x00")
		if len(argv) > 0 && filepath.Base(argv[0]) == "ssh" && strings.Contains(string(b), "-M\x00") && strings.Contains(string(b), "ControlPath="+sock+"\x00") {
			return pid
		}
	}
	return 0
}

// TestAttachSurvivesAKilledConnection: the ssh connection under `muster
// attach h1:x` is killed; the attached client says so, attaches again by
// itself, and the session's output is live in it again.
func TestAttachSurvivesAKilledConnection(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--host", "h1", "--name", "ticker", "-d", "--cmd", `i=0; while :; do i=$((i+1)); echo "tick-$i"; sleep 0.1; done`)

	tm := startTerm(t, e.vars, 100, 30, "attach", "h1:ticker")
	mark, since := tm.Mark, tm.Since
	poll.Wait(t, 20*time.Second, func() bool { return strings.Contains(since(0), "tick-") }, func() string { return "never attached: " + since(0) })

	pid := e.master("h1")
	if pid == 0 {
		t.Fatal("no ControlMaster for h1")
	}
	at := mark()
	killed := time.Now()
	syscall.Kill(pid, syscall.SIGKILL)
	poll.Wait(t, 20*time.Second, func() bool { return strings.Contains(since(at), "attaching again") },
		func() string { return "the client never said the connection was lost: " + since(at) })
	// Live again: a tick drawn after the attach came back in.
	poll.Wait(t, 30*time.Second, func() bool {
		s := since(at)
		i := strings.LastIndex(s, "\x1b[?1049h")
		return i >= 0 && strings.Contains(s[i:], "tick-")
	}, func() string { return "no live output after the reconnect: " + since(at) })
	t.Logf("reconnect: live output again %v after the connection was killed", time.Since(killed).Round(time.Millisecond))
	if !tm.Running() {
		t.Fatal("attach exited")
	}
	tm.Detach(t)
}

// TestHostDownAndBack: with h1's sshd stopped, host ls says unreachable,
// this machine's commands still answer, and ls shows h1's session as it
// last listed it, marked stale; a state change made on h1 meanwhile is
// seen once it is back.
func TestHostDownAndBack(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--name", "here", "-d", "--cmd", "cat")
	e.must("new", "--host", "h1", "--name", "x", "-d", "--cmd", e.hookLoop(e.spool("x")))
	e.hook("x", "UserPromptSubmit", `,"prompt":"run the tests"`)
	e.must("wait", "h1:x", "--until", "running", "--timeout", "20s")
	e.must("ls")

	srv.stop()
	stopped := time.Now()
	poll.Wait(t, 30*time.Second, func() bool { return e.hosts()["h1"].State == "unreachable" }, func() string { return "h1 never unreachable" })
	t.Logf("host ls said unreachable %v after sshd stopped", time.Since(stopped).Round(time.Millisecond))
	start := time.Now()
	out := e.must("ls", "--json")
	lsTook := time.Since(start)
	start = time.Now()
	e.must("capture", "here")
	t.Logf("with h1 down: ls %v, capture of a local session %v", lsTook.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	var rows []struct {
		Host     string  `json:"host"`
		Name     string  `json:"name"`
		RunState *string `json:"run_state"`
		Stale    bool    `json:"stale"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	var sawX, sawHere bool
	for _, r := range rows {
		if r.Host == "h1" && r.Name == "x" {
			sawX = r.Stale && r.RunState != nil && *r.RunState == "running"
		}
		sawHere = sawHere || r.Host == "" && r.Name == "here"
	}
	if !sawX || !sawHere {
		t.Fatalf("ls --json with h1 down: want here, and h1:x stale at running:\n%s", out)
	}
	if out := e.must("ls"); !strings.Contains(out, "running?") || !strings.Contains(out, "marked ?") {
		t.Fatalf("ls with h1 down:\n%s", out)
	}

	e.hook("x", "PermissionRequest", `,"tool_name":"Bash","tool_input":{"command":"make test"}`)
	srv.start()
	poll.Wait(t, 30*time.Second, func() bool { return e.hosts()["h1"].State == "connected" }, func() string { return "h1 never came back" })
	if r := e.run("wait", "h1:x", "--until", "waitingApproval", "--timeout", "10s"); r.code != 0 {
		t.Fatalf("the change made while h1 was down: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestChangedHostKeyNeedsAttention: h1 comes back with another host key;
// muster never accepts it: send reports needs-attention with the ssh
// command to run by hand, host ls says so, and nothing reached the pane.
func TestChangedHostKeyNeedsAttention(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--host", "h1", "--name", "x", "-d", "--cmd", "cat")
	srv.stop()
	os.Remove(filepath.Join(srv.dir, "hostkey"))
	os.Remove(filepath.Join(srv.dir, "hostkey.pub"))
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(srv.dir, "hostkey"))
	srv.start()

	r := e.run("send", "h1:x", "must not arrive", "--enter")
	if r.code != 4 || !strings.Contains(r.stderr, "needs-attention") || !strings.Contains(r.stderr, "-- h1 true") {
		t.Fatalf("send to h1 with a changed host key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if h := e.hosts()["h1"]; h.State != "needs-attention" || !strings.Contains(h.Command, "-- h1 true") {
		t.Fatalf("host ls: %+v", h)
	}
	// Past muster, with the new key accepted for this look only.
	path := srv.home + "/.local/share/muster/bin/" + version(e) + "/muster"
	out, err := exec.Command("ssh", "-F", e.sshConfig, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "h1", path, "capture", "x").CombinedOutput()
	if err != nil || strings.Contains(string(out), "must not arrive") {
		t.Fatalf("the pane after a refused send (%v):\n%s", err, out)
	}
}

// TestProviderNameIsNeverAHost: show PROVIDER:ID means the provider even
// when config.toml (written by hand) names a host like it; host add
// refuses such a name; HOST:PROVIDER:ID reaches a host's conversation.
func TestProviderNameIsNeverAHost(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	if r := e.run("host", "add", "claude", "h1"); r.code != 2 || !strings.Contains(r.stderr, "provider") {
		t.Fatalf("host add claude: exit %d\n%s", r.code, r.stderr)
	}
	e.must("host", "add", "h1", "h1")
	cfg := filepath.Join(e.home, "config", "config.toml")
	b, _ := os.ReadFile(cfg)
	// A host named claude whose key is unknown: anything sent its way
	// comes back needs-attention.
	hand := strings.Replace(strings.Replace(string(b), `name = "h1"`, `name = "claude"`, 1), `dest = "h1"`, `dest = "fresh"`, 1)
	if hand == string(b) {
		t.Fatalf("config.toml has no h1 to rename:\n%s", b)
	}
	os.WriteFile(cfg, []byte(string(b)+"\n"+hand[strings.Index(hand, "[[host]]"):]), 0o600)
	r := e.run("show", "claude:0123456789abcdef")
	if r.code == 0 || strings.Contains(r.stderr, "host claude") || strings.Contains(r.stderr, "needs-attention") {
		t.Fatalf("show claude:ID went to the host named claude: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	local := e.run("show", "claude:0123456789abcdef")
	viaHost := e.run("show", "h1:claude:0123456789abcdef")
	if viaHost.code == 0 || viaHost.stderr == "" || strings.Contains(viaHost.stderr, "no host") {
		t.Fatalf("show h1:claude:ID: exit %d\n%s (local said %s)", viaHost.code, viaHost.stderr, local.stderr)
	}
}
