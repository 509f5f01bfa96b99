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

// TestDrawerAnswersGemini: from the Live page's drawer in Chromium, the
// real Gemini CLI's shell approval is approved once and another is
// denied, with the buttons its dialog offers (the digits measured on the
// real CLI: internal/provider/gemini/testdata/dialog/README.md).
func TestDrawerAnswersGemini(t *testing.T) {
	realcli.SkipIfDisabled(t)
	s := realcli.New(t, realcli.Gemini, realcli.Options{})
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
	// Gemini reads its hooks from its settings, which the approval item
	// comes from (its Notification hook).
	e.must("hooks", "setup", "gemini")
	e.must("new", "gemini", "--name", "gm", "--dir", s.Dir, "--detach")
	pane := claudePane{e, "gm"}
	// Gemini CLI takes up to half a minute to start on a loaded machine.
	poll.Wait(t, 180*time.Second, func() bool {
		screen, _ := pane.Screen()
		if s.AnswerDialog(t, screen, pane) {
			return false
		}
		return strings.Contains(screen, "Type your message")
	}, func() string { sc, _ := pane.Screen(); return "Gemini CLI's prompt; screen:\n" + sc })
	enqueue := func(rs ...fakemodel.Reply) {
		t.Helper()
		if err := s.Server.Enqueue(rs...); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(s.Dir, name)); return err == nil }
	dialogUp := func() bool { sc, _ := pane.Screen(); return strings.Contains(sc, "│ Allow execution of [Shell]?") }

	srv := e.serve("--interactive")
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(srv.base+"/?token="+srv.token), chromedp.Navigate(srv.base+"/live"))
	waitStream(t, ctx, "open")

	// Approve once.
	enqueue(fakemodel.Shell("touch approved.txt"), fakemodel.Text("approved and done"))
	e.must("send", "gm", "make the approved file", "--enter")
	waitDrawerDialogFor(t, ctx, "touch approved.txt", 120*time.Second)
	labels := eval[string](t, ctx, `Array.from(document.querySelectorAll("#drawer .answers button")).map(function(b){return b.textContent+"/"+b.getAttribute("data-answer")}).join("|")`)
	if labels != "Allow once/once|Allow for this session/always|No, suggest changes/deny" {
		t.Errorf("the drawer's buttons: %s", labels)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(drawerButton("once"))))
	poll.Wait(t, 60*time.Second, func() bool { return exists("approved.txt") }, func() string {
		sc, _ := pane.Screen()
		return "approved.txt after Allow once from the drawer; screen:\n" + sc
	})
	poll.Wait(t, 120*time.Second, func() bool { sc, _ := pane.Screen(); return strings.Contains(sc, "approved and done") },
		func() string { sc, _ := pane.Screen(); return "the reply after the approved command; screen:\n" + sc })

	// Deny: Gemini cancels the turn, so the model gets no second call.
	enqueue(fakemodel.Shell("touch denied.txt"))
	e.must("send", "gm", "make the denied file", "--enter")
	waitDrawerDialogFor(t, ctx, "touch denied.txt", 120*time.Second)
	do(t, ctx, chromedp.Click(chromedp.CSS(drawerButton("deny"))))
	poll.Wait(t, 60*time.Second, func() bool { return !dialogUp() }, func() string {
		sc, _ := pane.Screen()
		return "the dialog to go after No from the drawer; screen:\n" + sc
	})
	e.waitScreen("gm", "Request cancelled")
	waitPage(t, ctx, "the denied item to leave the drawer", `String(document.querySelectorAll("#drawer section.item .answers").length)`,
		func(s string) bool { return s == "0" })
	time.Sleep(2 * time.Second) // a command let through would have run by now
	if exists("denied.txt") {
		t.Error("the denied command ran")
	}
}

// waitDrawerDialogFor is waitDrawerDialog with a deadline for a CLI that
// is slow to reach its dialog.
func waitDrawerDialogFor(t *testing.T, ctx context.Context, subject string, d time.Duration) {
	t.Helper()
	var last string
	poll.Wait(t, d, func() bool {
		last = eval[string](t, ctx, `Array.from(document.querySelectorAll("#drawer section.item")).filter(function(s){return s.querySelector(".answers button")}).map(function(s){return (s.querySelector("pre.subj")||{}).textContent||""}).join("|")`)
		return strings.Contains(last, subject)
	}, func() string { return "the drawer to offer answers to " + subject + "; last: " + last })
}
