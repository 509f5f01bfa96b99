package core_test

import (
	"encoding/json"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

func (e *env) explainJSON(name string) proto.Explanation {
	e.t.Helper()
	var x proto.Explanation
	if err := json.Unmarshal([]byte(e.must("explain", name, "--json")), &x); err != nil {
		e.t.Fatal(err)
	}
	return x
}

// openNotifications returns the open notification items of a session.
func (e *env) openNotifications(name string) []proto.AttentionItem {
	e.t.Helper()
	var out []proto.AttentionItem
	for _, it := range e.attention(false) {
		if it.SessionName == name && it.Reason == "notification" {
			out = append(out, it)
		}
	}
	return out
}

// TestTerminalNotificationsOpenAttentionItems is seed 000's "Activity and
// attention" with a real pane printing the sequences: OSC 9;4 progress is
// activity only; an OSC 9 notification split over two writes, an OSC 777
// notify and a burst of bells each become one attention item with their
// text, and explain shows the activity with its evidence.
func TestTerminalNotificationsOpenAttentionItems(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "sig", "--detach", "--cmd", "bash --norc --noprofile")
	// Each script waits before printing: a bell right after the user's own
	// keystroke (the Enter that ran the script) is not a request.
	run := func(body string) { e.must("send", "sig", e.script("sleep 1.2\n"+body), "--enter") }
	waitItems := func(what string, cond func([]proto.AttentionItem) bool) []proto.AttentionItem {
		t.Helper()
		var items []proto.AttentionItem
		if !eventually(func() bool { items = e.openNotifications("sig"); return cond(items) }) {
			t.Fatalf("%s: open notification items = %+v", what, items)
		}
		return items
	}
	activity := func(what, state, evidence string) proto.Activity {
		t.Helper()
		var a proto.Activity
		if !eventually(func() bool {
			x := e.explainJSON("sig")
			if x.Activity != nil {
				a = *x.Activity
			}
			return a.State == state && strings.Contains(a.Evidence, evidence)
		}) {
			t.Fatalf("%s: explain activity = %+v, want %s from %q", what, a, state, evidence)
		}
		return a
	}

	// ConEmu progress: working, and no attention item.
	run(`printf '\033]9;4;1;40\007'`)
	activity("9;4", "working", "OSC 9;4;1;40")
	if items := e.openNotifications("sig"); len(items) != 0 {
		t.Fatalf("OSC 9;4 opened items: %+v", items)
	}

	// An OSC 9 notification split over two writes.
	run(`printf '\033]9;Build '; sleep 0.3; printf 'finished\007'`)
	items := waitItems("OSC 9", func(it []proto.AttentionItem) bool { return len(it) == 1 })
	if it := items[0]; it.Message != "Build finished" || !it.Open || it.RunID != "" || it.SurfaceID == "" {
		t.Fatalf("OSC 9 item = %+v", it)
	}
	a := activity("OSC 9", "attention", "OSC 9;Build finished")
	if a.Notification != "Build finished" || a.Since == "" {
		t.Errorf("activity = %+v", a)
	}
	if n := e.session("sig").Attention; n != 1 {
		t.Errorf("ls attention = %d, want 1", n)
	}
	first := items[0].ID
	e.must("ack", "--all")

	// OSC 777 notify, after the per-pane rate limit.
	run(`sleep 1; printf '\033]777;notify;Deploy;done; all green\007'`)
	items = waitItems("OSC 777", func(it []proto.AttentionItem) bool { return len(it) == 1 && it[0].ID != first })
	if items[0].Message != "Deploy: done; all green" {
		t.Fatalf("OSC 777 item = %+v", items[0])
	}
	activity("OSC 777", "attention", "OSC 777;notify;Deploy;done; all green")
	e.must("ack", "--all")

	// A burst of bells is one item.
	run(`sleep 1; printf '\a\a\a'; sleep 0.2; printf '\a'; sleep 0.2; printf '\a\a'`)
	items = waitItems("bells", func(it []proto.AttentionItem) bool { return len(it) == 1 && it[0].Message == "bell" })
	bell := items[0].ID
	activity("bells", "attention", "BEL")
	e.must("send", "sig", "echo bells-done", "--enter")
	e.waitScreen("sig", "bells-done\n")
	all := e.attention(true)
	var bells int
	for _, it := range all {
		if it.SessionName == "sig" && it.Message == "bell" {
			bells++
		}
	}
	if bells != 1 || !slices.ContainsFunc(all, func(it proto.AttentionItem) bool { return it.ID == bell && it.Open }) {
		t.Fatalf("after the burst: %+v", all)
	}

	// wait --until attention is satisfied by the open item.
	e.must("wait", "sig", "--until", "attention", "--timeout", "10s")

	// Text explain shows the activity beside the (absent) run state.
	out := e.must("explain", "sig")
	if !strings.Contains(out, "activity") || !strings.Contains(out, "BEL") || !strings.Contains(out, "notification: bell") {
		t.Errorf("explain:\n%s", out)
	}
}

// TestStatusProbeAnsweredAndConsumedSequencesStayInMuster: Muster answers
// a program's OSC 7501 query whether or not a client is attached, and an
// attached client's terminal never receives the query or the sequences
// Muster consumes (agent statuses, OSC 9;4, notifications), while titles
// still reach it.
func TestStatusProbeAnsweredAndConsumedSequencesStayInMuster(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "probe", "--detach", "--cmd", "bash --norc --noprofile")
	// The query goes out as Claude Code sends it; the answer is read back
	// in raw mode (it ends with BEL, not a newline).
	probe := e.script(`stty raw -echo
printf '\033]7501;?\007'
IFS= read -r -s -t 5 -d $'\a' reply
stty sane
printf 'REPLY[%q]\n' "$reply"
printf '\033]0;probe-title\007\033]9;4;3;\007\033]9;Note for you\007\033]777;notify;T;B\007\033]7501;state=working:app=x\033\\'
printf '\033]99;i=1:d=0:p=title;K\033\\\033]99;i=1:p=body;kitty\033\\'
echo SIG-DONE-$1`)
	const wantReply = `REPLY[$'\E]7501;?']`

	// Nobody attached: the daemon answers.
	e.must("send", "probe", probe+" one", "--enter")
	e.waitScreen("probe", "SIG-DONE-one")
	e.waitScreen("probe", wantReply)

	// Attached: the daemon still answers (no client's terminal is asked).
	c := e.attach("probe", 100, 30, true)
	c.waitScreen("SIG-DONE-one")
	e.must("send", "probe", "clear; "+probe+" two", "--enter")
	c.waitScreen("SIG-DONE-two")
	if !strings.Contains(c.screen(), wantReply) {
		t.Errorf("no answer while attached:\n%s", c.screen())
	}
	raw := c.detach()
	for _, s := range []string{"\x1b]7501", "\x1b]9;4", "\x1b]9;Note", "\x1b]777;notify", "\x1b]99;"} {
		if strings.Contains(raw, s) {
			t.Errorf("the client's terminal received %q", s)
		}
	}
	if !strings.Contains(raw, "probe-title") {
		t.Errorf("the client's terminal lost the title")
	}
	// The consumed notifications still reached Muster (the second run's
	// merged into the first's item; the kitty one came within the rate
	// limit).
	if !eventually(func() bool {
		items := e.openNotifications("probe")
		return len(items) == 1 && items[0].Message == "Note for you"
	}) {
		t.Errorf("notification items: %+v", e.openNotifications("probe"))
	}
}

func (e *env) waitJSON(args ...string) (proto.WaitResult, int) {
	e.t.Helper()
	r := e.run(append([]string{"wait"}, append(args, "--json")...)...)
	var res proto.WaitResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		e.t.Fatalf("wait %v: exit %d, %q, %q", args, r.code, r.stdout, r.stderr)
	}
	return res, r.code
}

// TestWaitDoneWaitingAndResume: `done` returns for an exited pane with its
// exit code and for a restorable one; `waiting` returns for a turn that
// ended at the prompt; resuming a session resolves its disconnected item.
func TestWaitDoneWaitingAndResume(t *testing.T) {
	e, _ := agentEnv(t)
	work := t.TempDir()

	// A shell pane has no run: done is its pane exiting.
	e.must("new", "--name", "sh", "--detach", "--cmd", "bash --norc --noprofile")
	if _, code := e.waitJSON("sh", "--until", "done", "--timeout", "300ms"); code != 1 {
		t.Fatalf("done while the shell runs: exit %d, want 1 (timeout)", code)
	}
	e.must("send", "sh", "exit 7", "--enter")
	res, code := e.waitJSON("sh", "--until", "done", "--timeout", "20s")
	if s := res.Sessions[0]; code != 0 || !s.Reached || s.Pane != proto.PaneExited || s.ExitCode == nil || *s.ExitCode != 7 {
		t.Fatalf("done after exit 7: exit %d, %+v", code, res)
	}

	// A Claude turn that ends is `waiting` (the agent is at its prompt).
	e.must("new", "claude", "--name", "cl", "--dir", work, "--detach")
	e.waitConfirmed("cl")
	e.must("send", "cl", "reply first turn", "--enter")
	// No run yet, so the current state cannot satisfy the wait.
	res, code = e.waitJSON("cl", "--until", "waiting", "--timeout", "30s")
	if s := res.Sessions[0]; code != 0 || (s.State != "succeeded" && s.State != "idle") || s.Pane != proto.PaneLive {
		t.Fatalf("waiting after a turn: exit %d, %+v", code, res)
	}

	// A turn left open when the daemon dies is disconnected at the next
	// start (the startup sweep); the session is restorable, which is done;
	// resume resolves the disconnected item.
	e.must("send", "cl", "sleep 600000", "--enter")
	if !eventually(func() bool { s := e.session("cl"); return s.RunState != nil && *s.RunState == "running" }) {
		t.Fatalf("the long turn never ran: %+v", e.session("cl"))
	}
	var st struct{ PID int }
	json.Unmarshal([]byte(e.must("daemon", "status", "--json")), &st)
	if st.PID <= 0 {
		t.Fatal("no daemon pid")
	}
	syscall.Kill(st.PID, syscall.SIGKILL)
	if !eventually(func() bool { return syscall.Kill(st.PID, 0) != nil }) {
		t.Fatal("the daemon did not die")
	}
	res, code = e.waitJSON("cl", "--until", "done", "--timeout", "20s")
	if s := res.Sessions[0]; code != 0 || s.Pane != proto.PaneRestorable || s.State != "disconnected" {
		t.Fatalf("done after the daemon stopped: exit %d, %+v", code, res)
	}
	disc := func() []proto.AttentionItem {
		var out []proto.AttentionItem
		for _, it := range e.attention(true) {
			if it.SessionName == "cl" && it.Reason == "disconnected" {
				out = append(out, it)
			}
		}
		return out
	}
	if items := disc(); len(items) != 1 || !items[0].Open {
		t.Fatalf("disconnected items before resume: %+v", items)
	}
	e.must("resume", "cl")
	if items := disc(); len(items) != 1 || items[0].Open || items[0].Resolution != "the session was resumed" {
		t.Fatalf("disconnected items after resume: %+v", items)
	}
}
