package hosts_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/poll"
)

// TestTwoHosts: two hosts (two sshd, two users) each hold a session named
// x, and nothing Muster does to one reaches the other: ls lists both with
// their host, send and capture keep each its own text, an OSC 9 printed
// on h2 and a hook event run on h2 reach this machine's attention and
// `wait --any` as h2's, an attach to h2:x draws h2's screen, and killing
// h1:x leaves h2:x running.
func TestTwoHosts(t *testing.T) {
	e1 := newEnv(t, newServer(t))
	e2 := e1.addHost("h2", newServer(t))
	e1.must("host", "add", "h1", "h1")
	e1.must("host", "add", "h2", "h2")
	// Each x plays an agent that runs its hooks (hookLoop) in the
	// background of a cat, which echoes what is sent to it.
	e1.must("new", "--host", "h1", "--name", "x", "-d", "--cmd", e1.hookLoop(e1.spool("x"))+" & exec cat")
	e1.must("new", "--host", "h2", "--name", "x", "-d", "--cmd", e2.hookLoop(e2.spool("x"))+" & exec cat")

	rows := e1.ls()
	for _, h := range []string{"h1", "h2"} {
		if r, ok := find(rows, h, "x"); !ok || r.State != "running" {
			t.Fatalf("ls --json: %s:x %+v, %v; want it running in %+v", h, r, ok, rows)
		}
	}
	if rows := e1.ls("--host", "h2"); len(rows) != 1 || rows[0].Host != "h2" || rows[0].Name != "x" {
		t.Fatalf("ls --host h2: %+v", rows)
	}
	var ids []struct {
		Host string `json:"host"`
		ID   string `json:"id"`
	}
	json.Unmarshal([]byte(e1.must("ls", "--json")), &ids)
	if len(ids) != 2 || ids[0].ID == "" || ids[0].ID == ids[1].ID {
		t.Fatalf("the two x's ids collide: %+v", ids)
	}

	e1.must("send", "h1:x", "said to one", "--enter")
	e1.must("send", "h2:x", "said to two", "--enter")
	for _, c := range []struct{ name, own, other string }{{"h1:x", "said to one", "said to two"}, {"h2:x", "said to two", "said to one"}} {
		poll.Wait(t, 20*time.Second, func() bool { return strings.Count(e1.run("capture", c.name).stdout, c.own) == 2 },
			func() string { return "capture " + c.name + ": " + e1.run("capture", c.name).stdout })
		if out := e1.must("capture", c.name); strings.Contains(out, c.other) {
			t.Fatalf("capture %s shows the other host's text:\n%s", c.name, out)
		}
	}

	// cat prints the notification back once the line is sent.
	e1.must("send", "h2:x", "\x1b]9;need you\x07", "--enter")
	type item struct {
		Host        string `json:"host"`
		SessionName string `json:"session_name"`
		Reason      string `json:"reason"`
		Message     string `json:"message"`
	}
	var items []item
	attention := func() []item {
		items = nil
		json.Unmarshal([]byte(e1.run("attention", "--json").stdout), &items)
		return items
	}
	poll.Wait(t, 20*time.Second, func() bool { return len(attention()) > 0 },
		func() string { return "attention --json: " + e1.run("attention", "--json").stdout })
	if len(items) != 1 || items[0].Host != "h2" || items[0].SessionName != "x" || !strings.Contains(items[0].Message, "need you") {
		t.Fatalf("attention after an OSC 9 on h2:x: %+v, want one item of h2's x", items)
	}

	for _, e := range []*env{e1, e2} {
		e.hook("x", "UserPromptSubmit", `,"prompt":"run the tests"`)
	}
	e1.must("wait", "h1:x", "--until", "running", "--timeout", "20s")
	e1.must("wait", "h2:x", "--until", "running", "--timeout", "20s")
	_, done := e1.background("wait", "--any", "--until", "waitingApproval", "--timeout", "60s")
	poll.Wait(t, 20*time.Second, func() bool { return e1.remoteWaits() > 0 && e2.remoteWaits() > 0 },
		func() string { return "the hosts' waits never started" })
	e2.hook("x", "PermissionRequest", `,"tool_name":"Bash","tool_input":{"command":"make test"}`)
	r := waitResult(t, done, 30*time.Second)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "h2:x: waitingApproval" {
		t.Fatalf("wait --any: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// The agent's own request supersedes the terminal's notification.
	poll.Wait(t, 20*time.Second, func() bool { return len(attention()) == 1 && items[0].Reason == "approval-requested" },
		func() string { return "attention --json: " + e1.run("attention", "--json").stdout })
	if it := items[0]; it.Host != "h2" || it.SessionName != "x" || !strings.Contains(it.Message, "make test") {
		t.Fatalf("attention after h2's approval request: %+v, want h2's x asking for make test", it)
	}
	if r, _ := find(e1.ls(), "h1", "x"); r.State != "running" {
		t.Fatalf("h1:x after h2's events: %+v", r)
	}

	tm := startTerm(t, e1.vars, 100, 30, "attach", "h2:x")
	poll.Wait(t, 20*time.Second, func() bool { return strings.Contains(tm.Since(0), "said to two") },
		func() string { return "attach h2:x never drew h2's screen: " + tm.Since(0) })
	tm.Type("typed into two\r")
	poll.Wait(t, 20*time.Second, func() bool { return strings.Count(tm.Since(0), "typed into two") >= 2 },
		func() string { return "no echo from h2:x: " + tm.Since(0) })
	tm.Detach(t)
	if s := tm.Since(0); strings.Contains(s, "said to one") {
		t.Fatalf("attach h2:x drew h1's screen:\n%q", s)
	}
	if out := e1.must("capture", "h1:x"); strings.Contains(out, "typed into two") {
		t.Fatalf("keys typed into h2:x reached h1:x:\n%s", out)
	}

	e1.must("kill", "h1:x")
	rows = e1.ls()
	if _, ok := find(rows, "h1", "x"); ok {
		t.Fatalf("h1:x is still listed after kill: %+v", rows)
	}
	if r, ok := find(rows, "h2", "x"); !ok || r.State != "running" {
		t.Fatalf("h2:x after kill h1:x: %+v, %v", r, ok)
	}
	if out := e1.must("capture", "h2:x"); !strings.Contains(out, "typed into two") {
		t.Fatalf("capture h2:x after kill h1:x:\n%s", out)
	}
}
