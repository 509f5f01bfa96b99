package hosts_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/poll"
)

// hostCallHelper, set in a pane's environment, makes this test binary a
// control client run inside that pane (hostCallFromPane): it asks the
// local daemon for host.call of each op named, and writes each answer to
// the file the variable names.
const hostCallHelper = "MUSTER_TEST_HOSTCALL_OUT"

// hostCallFromPane is the test binary run as hostCallHelper says.
func hostCallFromPane(out string) {
	var lines []string
	say := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	defer func() {
		os.WriteFile(out+".tmp", []byte(strings.Join(lines, "\n")+"\n"), 0o600)
		os.Rename(out+".tmp", out)
	}()
	dirs, err := paths.Resolve(os.Getenv)
	if err != nil {
		say("dirs: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, dirs, "test")
	if err != nil {
		say("dial: %v", err)
		return
	}
	defer c.Close()
	for _, call := range []proto.HostCallArgs{
		{Host: "h1", Op: proto.OpList},
		{Host: "h1", Op: proto.OpKill, Args: json.RawMessage(`{"name":"x"}`)},
	} {
		var res json.RawMessage
		err := c.Call(ctx, proto.OpHostCall, call, &res)
		if pe, ok := errors.AsType[*proto.Error](err); ok {
			say("%s: %s: %s", call.Op, pe.Code, pe.Message)
		} else if err != nil {
			say("%s: error: %v", call.Op, err)
		} else {
			say("%s: ok: %s", call.Op, res)
		}
	}
}

func names(rows []hostSession) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Host+":"+r.Name+":"+r.State)
	}
	slices.Sort(out)
	return out
}

// TestWarmLsStartsNoSSH: once a first `muster ls` has the local daemon
// hold a relay to the host, the next lists the same rows without
// starting any ssh process (it used to fork one per host). With the
// host's master connection killed, the next ls still lists the host's
// sessions: the daemon dials the relay again.
func TestWarmLsStartsNoSSH(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	sshRuns := e.sshLog()
	e.must("host", "add", "h1", "h1")
	e.must("new", "--host", "h1", "--name", "x", "-d", "--cmd", "cat")
	e.must("new", "--name", "here", "-d", "--cmd", "cat")
	first := names(e.ls())
	if !slices.Contains(first, "h1:x:running") || !slices.Contains(first, ":here:running") {
		t.Fatalf("first ls: %v", first)
	}
	before := len(sshRuns())
	second := names(e.ls())
	if runs := sshRuns(); len(runs) != before {
		t.Fatalf("a warm ls started %d ssh processes:\n%s", len(runs)-before, strings.Join(runs[before:], "\n"))
	}
	if !slices.Equal(first, second) {
		t.Fatalf("warm ls listed %v, the first %v", second, first)
	}
	if out := e.must("ls"); !strings.Contains(out, "h1  ") || !strings.Contains(out, "x ") {
		t.Fatalf("warm ls:\n%s", out)
	}

	pid := e.master("h1")
	if pid == 0 {
		t.Fatal("no master connection for h1")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	poll.Wait(t, 10*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }, func() string { return "the master outlived SIGKILL" })
	if after := names(e.ls()); !slices.Equal(after, first) {
		t.Fatalf("ls after the master was killed: %v, want %v", after, first)
	}
	if st := e.hosts()["h1"]; st.State != "connected" {
		t.Fatalf("host ls after the master was killed: %+v", st)
	}
}

// TestHostCallFromAPane: a process inside a local pane may read a host's
// sessions through the local daemon's host.call, but not drive them: a
// kill of h1:x is refused, and x lives on.
func TestHostCallFromAPane(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--host", "h1", "--name", "x", "-d", "--cmd", "cat")
	out := filepath.Join(e.home, "hostcall.out")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e.must("new", "--name", "inside", "-d", "--cmd", fmt.Sprintf("env MUSTER_HOME=%s XDG_RUNTIME_DIR= %s=%s %s; sleep 600", e.home, hostCallHelper, out, self))
	var got string
	poll.Wait(t, 60*time.Second, func() bool {
		b, err := os.ReadFile(out)
		got = string(b)
		return err == nil
	}, func() string { return "the helper in the pane never answered" })
	if !strings.Contains(got, "ls: ok: [") || !strings.Contains(got, `"name":"x"`) {
		t.Fatalf("host.call ls from a pane:\n%s", got)
	}
	if !strings.Contains(got, "kill: forbidden: refused: this process runs inside") {
		t.Fatalf("host.call kill from a pane was not refused:\n%s", got)
	}
	if !slices.Contains(names(e.ls()), "h1:x:running") {
		t.Fatalf("h1:x is gone after a refused kill:\n%s", e.must("ls"))
	}

	// The muster CLI in a pane: through the relay (send) and over ssh
	// (new --host, attach), driving h1 is refused; reading is not.
	cli := filepath.Join(e.home, "cli.out")
	script := fmt.Sprintf(`export MUSTER_HOME=%[1]s XDG_RUNTIME_DIR=
m=%[2]s
{ $m send h1:x hi --enter; echo "send=$?"
  $m new --host h1 --name frompane -d --cmd cat; echo "new=$?"
  $m explain h1:x >/dev/null; echo "explain=$?"; } >%[3]s.tmp 2>&1
mv %[3]s.tmp %[3]s; sleep 600`, e.home, musterBin, cli)
	e.must("new", "--name", "inside2", "-d", "--cmd", script)
	poll.Wait(t, 60*time.Second, func() bool {
		b, err := os.ReadFile(cli)
		got = string(b)
		return err == nil
	}, func() string { return "the muster commands in the pane never finished" })
	for _, want := range []string{"send=1", "new=1", "explain=0", "it may not new sessions on host h1"} {
		if !strings.Contains(got, want) {
			t.Fatalf("muster in a pane, want %q:\n%s", want, got)
		}
	}
	if rows := names(e.ls()); slices.Contains(rows, "h1:frompane:running") {
		t.Fatalf("a pane made a session on h1: %v", rows)
	}
}

// TestWarmCommandsStartNoSSH: with the local daemon holding a relay to
// the host, send, capture, explain, rename, ack and kill on HOST:NAME
// start no ssh process (each used to run the host's muster over ssh),
// and say what they do as on this machine. With the local daemon
// stopped, a capture still works, over ssh.
func TestWarmCommandsStartNoSSH(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	sshRuns := e.sshLog()
	e.must("host", "add", "h1", "h1")
	e.must("new", "--host", "h1", "--name", "x", "-d", "--cmd", "cat")
	e.ls() // starts the local daemon (and asks h1 over ssh)
	e.ls() // has it dial its relay to h1
	before := len(sshRuns())

	e.must("send", "h1:x", "hello from afar", "--enter")
	var screen string
	poll.Wait(t, 20*time.Second, func() bool {
		screen = e.must("capture", "h1:x")
		return strings.Count(screen, "hello from afar") >= 2 // typed, and cat's echo
	}, func() string { return "capture h1:x never showed the text sent:\n" + screen })
	if out := e.must("explain", "h1:x"); !strings.Contains(out, "x") {
		t.Fatalf("explain h1:x:\n%s", out)
	}
	e.must("rename", "h1:x", "y")
	if got := names(e.ls()); !slices.Contains(got, "h1:y:running") {
		t.Fatalf("after rename h1:x y: %v", got)
	}
	if r := e.run("capture", "h1:x"); r.code == 0 || !strings.Contains(r.stderr, "x") {
		t.Fatalf("capture of the old name: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := e.run("ack", "h1:999999"); r.code != 1 || !strings.Contains(r.stderr, "no attention item 999999") {
		t.Fatalf("ack h1:999999: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	if out := e.must("kill", "h1:y"); !strings.Contains(out, "killed y") {
		t.Fatalf("kill h1:y: %q", out)
	}
	if runs := sshRuns(); len(runs) != before {
		t.Fatalf("warm commands started %d ssh processes:\n%s", len(runs)-before, strings.Join(runs[before:], "\n"))
	}
	if got := names(e.ls()); slices.Contains(got, "h1:y:running") {
		t.Fatalf("after kill h1:y: %v", got)
	}

	e.must("new", "--host", "h1", "--name", "z", "-d", "--cmd", "cat")
	e.must("daemon", "stop")
	before = len(sshRuns())
	if r := e.run("capture", "h1:z"); r.code != 0 {
		t.Fatalf("capture h1:z with no local daemon: exit %d, stderr %q", r.code, r.stderr)
	}
	if runs := sshRuns(); len(runs) == before {
		t.Fatal("capture with no local daemon started no ssh process: what answered it?")
	}
}
