package core_test

import (
	"encoding/json"
	"slices"
	"strings"
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
