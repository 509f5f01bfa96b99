package hosts_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/poll"
)

func find(rows []hostSession, host, name string) (hostSession, bool) {
	for _, r := range rows {
		if r.Host == host && r.Name == name {
			return r, true
		}
	}
	return hostSession{}, false
}

// TestSessionsOnAHost: new --host creates a session on the host; ls
// lists it beside this machine's with its host, --host filters; send,
// capture, rename and kill reach it as HOST:NAME; an unreachable host is
// listed as such without holding up this machine's rows.
func TestSessionsOnAHost(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--host", "h1", "--name", "x", "-d", "--cmd", "cat")
	e.must("new", "--name", "here", "-d", "--cmd", "cat")

	rows := e.ls()
	if _, ok := find(rows, "h1", "x"); !ok {
		t.Fatalf("ls --json has no h1:x: %+v", rows)
	}
	if _, ok := find(rows, "", "here"); !ok {
		t.Fatalf("ls --json has no local here: %+v", rows)
	}
	if rows := e.ls("--host", "h1"); len(rows) != 1 || rows[0].Host != "h1" {
		t.Fatalf("ls --host h1: %+v", rows)
	}
	if out := e.must("ls"); !strings.Contains(out, "HOST") || !strings.Contains(out, "h1 ") {
		t.Fatalf("ls:\n%s", out)
	}

	e.must("send", "h1:x", "hello from afar", "--enter")
	poll.Wait(t, 20*time.Second, func() bool {
		return strings.Count(e.run("capture", "h1:x").stdout, "hello from afar") == 2
	}, func() string { return "capture h1:x: " + e.run("capture", "h1:x").stdout })
	if strings.Contains(e.run("capture", "here").stdout, "hello") {
		t.Fatal("send h1:x reached the local session")
	}
	if r := e.run("capture", "h1:nope"); r.code == 0 || !strings.Contains(r.stderr, "nope") {
		t.Fatalf("capture h1:nope: exit %d, %s", r.code, r.stderr)
	}
	if r := e.run("capture", "h9:x"); r.code == 0 || !strings.Contains(r.stderr, `no host "h9"`) {
		t.Fatalf("capture h9:x: exit %d, %s", r.code, r.stderr)
	}
	e.must("rename", "h1:x", "y")
	e.must("kill", "h1:y")
	if _, ok := find(e.ls(), "h1", "y"); ok {
		t.Fatal("h1:y is still listed after kill")
	}

	e.must("new", "--host", "h1", "--name", "z", "-d", "--cmd", "cat")
	srv.stop()
	r := e.run("ls")
	if r.code != 0 || !strings.Contains(r.stdout, "here") || !strings.Contains(r.stdout, "host h1: unreachable") {
		t.Fatalf("ls with h1 down: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestAttachToAHostSession types into a session on a host through
// `muster attach HOST:NAME` in a real PTY, sees the echo, detaches with
// the detach key, and the session keeps running there.
func TestAttachToAHostSession(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--host", "h1", "--name", "x", "-d", "--cmd", "cat")

	tm := startTerm(t, e.vars, 100, 30, "attach", "h1:x")
	seen := func(s string) bool { return strings.Contains(tm.Since(0), s) }
	// Keys typed before the pane is up would reach the host's shell
	// instead; the alternate screen says the attach is in.
	poll.Wait(t, 20*time.Second, func() bool { return seen("\x1b[?1049h") }, func() string { return "attach never entered: " + tm.Since(0) })
	tm.Type("typed remotely\r")
	poll.Wait(t, 20*time.Second, func() bool { return seen("typed remotely") }, func() string { return "no echo: " + tm.Since(0) })
	tm.Detach(t)
	if r, ok := find(e.ls(), "h1", "x"); !ok || r.State != "running" {
		t.Fatalf("h1:x after detach: %+v, %v", r, ok)
	}
	if out := e.must("capture", "h1:x"); strings.Count(out, "typed remotely") != 2 {
		t.Fatalf("capture h1:x after attach:\n%s", out)
	}
}

// TestAttentionSpansHosts: an item a host's session raises (here a
// terminal notification, OSC 9) is in the local `muster attention`, with
// its host, and `muster ack HOST:ID` resolves it there.
func TestAttentionSpansHosts(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--host", "h1", "--name", "asks", "-d", "--cmd", `printf '\033]9;approve the deploy\007'; exec cat`)
	var items []struct {
		ID          int64  `json:"id"`
		Host        string `json:"host"`
		SessionName string `json:"session_name"`
		Message     string `json:"message"`
	}
	poll.Wait(t, 20*time.Second, func() bool {
		items = nil
		json.Unmarshal([]byte(e.run("attention", "--json").stdout), &items)
		return len(items) == 1
	}, func() string { return "attention --json: " + e.run("attention", "--json").stdout })
	if it := items[0]; it.Host != "h1" || it.SessionName != "asks" || !strings.Contains(it.Message, "approve the deploy") {
		t.Fatalf("item %+v, want h1's session asks with its message", it)
	}
	if out := e.must("attention"); !strings.Contains(out, "h1:asks") || !strings.Contains(out, fmt.Sprintf("h1:%d", items[0].ID)) {
		t.Fatalf("attention:\n%s", out)
	}
	e.must("ack", fmt.Sprintf("h1:%d", items[0].ID))
	if out := e.must("attention"); !strings.Contains(out, "Nothing needs your attention") {
		t.Fatalf("attention after ack h1:%d:\n%s", items[0].ID, out)
	}
}
