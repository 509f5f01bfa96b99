package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/musterhq/muster/e2e/realcli"
	"github.com/musterhq/muster/internal/testing/fakemodel"
	"github.com/musterhq/muster/internal/testing/poll"
)

// claudeEnv is a Muster home whose daemon runs the real Claude Code
// (e2e/realcli's pinned release, offline against its fake model).
func claudeEnv(t *testing.T) (*env, *realcli.Setup) {
	t.Helper()
	realcli.SkipIfDisabled(t)
	s := realcli.New(t, realcli.Claude, realcli.Options{})
	e := &env{t: t, home: s.MusterHome}
	for _, kv := range s.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + filepath.Dir(s.Bin) + string(os.PathListSeparator) + v
		}
		e.vars = append(e.vars, kv)
	}
	// Registered after realcli.New: the daemon and its panes stop before
	// the Setup checks that nothing is left running.
	t.Cleanup(func() { e.run("daemon", "stop", "--force") })
	return e, s
}

// claudePane is a Muster pane as realcli's Terminal, which answers the
// start-up dialogs a fresh Claude Code may still show.
type claudePane struct {
	e    *env
	name string
}

func (p claudePane) Screen() (string, error) { return p.e.run("capture", p.name) }
func (p claudePane) Press(k realcli.Key) error {
	args := []string{"send", p.name, k.Bytes}
	if k == realcli.KeyEnter {
		args = []string{"send", p.name, "", "--enter"}
	}
	_, err := p.e.run(args...)
	return err
}

// drawerButton is the selector of the drawer's answer buttons of one
// class (once, always, deny).
func drawerButton(answer string) string {
	return `#drawer section.item button[data-answer="` + answer + `"]`
}

// waitDrawerDialog waits until the drawer shows a dialog whose subject
// holds subject, with its buttons.
func waitDrawerDialog(t *testing.T, ctx context.Context, subject string) {
	t.Helper()
	waitPage(t, ctx, "the drawer to offer answers to "+subject,
		`Array.from(document.querySelectorAll("#drawer section.item")).filter(function(s){return s.querySelector(".answers button")}).map(function(s){return (s.querySelector("pre.subj")||{}).textContent||""}).join("|")`,
		func(s string) bool { return strings.Contains(s, subject) })
}

// TestDrawerAnswersClaude: from the Live page's drawer in Chromium, the
// real Claude Code's permission dialog is approved once and another is
// denied, with the buttons the dialog itself offers; and a click on a
// dialog the page shows after the pane moved on to another is refused,
// shows the new screen and sends nothing.
func TestDrawerAnswersClaude(t *testing.T) {
	e, s := claudeEnv(t)
	e.must("new", "claude", "--name", "cl", "--dir", s.Dir, "--detach")
	pane := claudePane{e, "cl"}
	poll.Wait(t, 90*time.Second, func() bool {
		screen, _ := pane.Screen()
		if s.AnswerDialog(t, screen, pane) {
			return false
		}
		return strings.Contains(screen, "manual mode on")
	}, func() string { sc, _ := pane.Screen(); return "Claude Code's prompt; screen:\n" + sc })
	enqueue := func(rs ...fakemodel.Reply) {
		t.Helper()
		if err := s.Server.Enqueue(rs...); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(s.Dir, name)); return err == nil }

	srv := e.serve("--interactive")
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(srv.base+"/?token="+srv.token), chromedp.Navigate(srv.base+"/live"))
	waitStream(t, ctx, "open")

	// Approve once.
	enqueue(fakemodel.Shell("touch approved.txt"), fakemodel.Text("approved and done"))
	e.must("send", "cl", "make the approved file", "--enter")
	waitDrawerDialog(t, ctx, "touch approved.txt")
	labels := eval[string](t, ctx, `Array.from(document.querySelectorAll("#drawer .answers button")).map(function(b){return b.textContent+"/"+b.getAttribute("data-answer")}).join("|")`)
	if !strings.HasPrefix(labels, "Yes/once|") || !strings.HasSuffix(labels, "|No/deny") {
		t.Errorf("the drawer's buttons: %s", labels)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(drawerButton("once"))))
	poll.Wait(t, 60*time.Second, func() bool { return exists("approved.txt") }, func() string {
		sc, _ := pane.Screen()
		return "approved.txt after Yes from the drawer; screen:\n" + sc
	})
	e.waitScreen("cl", "approved and done")

	// Deny.
	enqueue(fakemodel.Shell("touch denied.txt"))
	e.must("send", "cl", "make the denied file", "--enter")
	waitDrawerDialog(t, ctx, "touch denied.txt")
	do(t, ctx, chromedp.Click(chromedp.CSS(drawerButton("deny"))))
	poll.Wait(t, 60*time.Second, func() bool {
		sc, _ := pane.Screen()
		return !strings.Contains(sc, "Do you want to proceed?")
	}, func() string {
		sc, _ := pane.Screen()
		return "the dialog to go after No from the drawer; screen:\n" + sc
	})
	waitPage(t, ctx, "the denied item to leave the drawer", `String(document.querySelectorAll("#drawer section.item .answers").length)`,
		func(s string) bool { return s == "0" })
	if exists("denied.txt") {
		t.Error("the denied command ran")
	}

	// A stale click: the page stops hearing the daemon while it shows the
	// dialog of first.txt; in the pane that one is approved and the next
	// one (second.txt) comes up; the page's No, for first.txt, is refused.
	enqueue(fakemodel.Shell("touch first.txt"), fakemodel.Shell("touch second.txt"))
	e.must("send", "cl", "make two files", "--enter")
	waitDrawerDialog(t, ctx, "touch first.txt")
	do(t, ctx, chromedp.Evaluate[chromedp.Void]("window.musterLive.pause()"))
	e.must("send", "cl", "1")
	e.waitScreen("cl", "touch second.txt")
	poll.Wait(t, 60*time.Second, func() bool { return exists("first.txt") }, func() string { return "first.txt approved from the CLI" })
	do(t, ctx, chromedp.Click(chromedp.CSS(drawerButton("deny"))))
	got := waitPage(t, ctx, "the refusal", `(document.querySelector("#drawer .result")||{}).textContent||""`,
		func(s string) bool { return s != "" && !strings.HasPrefix(s, "sending") })
	if !strings.Contains(got, "nothing was sent") {
		t.Errorf("the stale click's result: %q", got)
	}
	if sc := eval[string](t, ctx, `(document.querySelector("#drawer pre.screen")||{}).textContent||""`); !strings.Contains(sc, "touch second.txt") {
		t.Errorf("the refusal does not show the new screen: %q", sc)
	}
	time.Sleep(2 * time.Second) // a key sent would have answered by now
	if sc, _ := pane.Screen(); !strings.Contains(sc, "Do you want to proceed?") || !strings.Contains(sc, "touch second.txt") {
		t.Errorf("the second dialog did not stay after the refused click; screen:\n%s", sc)
	}
	t.Logf("stale click refused: %s", got)
	// Let the last dialog go.
	e.must("send", "cl", "\x1b")
}

// askColor is the fake model's AskUserQuestion call: one question, two
// options.
var askColor = map[string]any{"questions": []any{map[string]any{
	"question": "Which color do you want?", "header": "Color", "multiSelect": false,
	"options": []any{map[string]any{"label": "Red", "description": "warm"}, map[string]any{"label": "Blue", "description": "cold"}},
}}}

// TestDrawerAnswersClaudeQuestion: the real Claude Code's question
// (AskUserQuestion) shows in the drawer with a button per option, and the
// second option's button answers it: the model gets Blue.
func TestDrawerAnswersClaudeQuestion(t *testing.T) {
	e, s := claudeEnv(t)
	e.must("new", "claude", "--name", "cq", "--dir", s.Dir, "--detach")
	pane := claudePane{e, "cq"}
	poll.Wait(t, 90*time.Second, func() bool {
		screen, _ := pane.Screen()
		if s.AnswerDialog(t, screen, pane) {
			return false
		}
		return strings.Contains(screen, "manual mode on")
	}, func() string { sc, _ := pane.Screen(); return "Claude Code's prompt; screen:\n" + sc })
	if err := s.Server.Enqueue(fakemodel.Tool("AskUserQuestion", askColor), fakemodel.Text("you picked a color")); err != nil {
		t.Fatal(err)
	}
	srv := e.serve("--interactive")
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(srv.base+"/?token="+srv.token), chromedp.Navigate(srv.base+"/live"))
	waitStream(t, ctx, "open")

	e.must("send", "cq", "ask me a question", "--enter")
	e.waitScreen("cq", "Which color do you want?")
	time.Sleep(500 * time.Millisecond) // the dialog takes keys once drawn
	waitPage(t, ctx, "the drawer to offer the question's options",
		`Array.from(document.querySelectorAll("#drawer .answers button")).map(function(b){return b.textContent}).join("|")`,
		func(s string) bool { return strings.HasPrefix(s, "Red|Blue") })
	do(t, ctx, chromedp.Click(chromedp.CSS(`#drawer .answers button:nth-child(2)`)))
	e.waitScreen("cq", "you picked a color")
	turns := s.Server.Turns()
	if len(turns) == 0 {
		t.Fatal("no model turn")
	}
	if out, ok := turns[len(turns)-1].ToolOutput(); !ok || !strings.Contains(out, "Blue") || strings.Contains(out, "Red") {
		t.Errorf("the model got the tool output %q, want the answer Blue", out)
	}
}
