package realcli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/e2e/realcli"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/fakemodel"
)

// TestMusterClaudeHooklessIdle, TestMusterCodexHookless and
// TestMusterGeminiHookless: the CLI typed by hand into a shell pane, with
// no hooks anywhere, is idle at its prompt, not running (issue 10's
// table: the coarse run said running), and a prompt is then a run that
// ends when the reply is in: `wait --until done,waiting` returns, and
// explain shows what ended it. Claude Code's and Codex's turns are read
// from their transcript and rollout (one pane in the directory: the
// transcript is its own); Gemini CLI's chat file opens the run, and its
// title going back to Ready ends it (the chat file marks no success).
func TestMusterClaudeHooklessIdle(t *testing.T) {
	t.Parallel()
	hooklessTurn(t, realcli.Claude, "native", "muster.native.turnCompleted")
}

func TestMusterCodexHookless(t *testing.T) {
	t.Parallel()
	hooklessTurn(t, realcli.Codex, "native", "muster.native.turnCompleted")
}

func TestMusterGeminiHookless(t *testing.T) {
	t.Parallel()
	hooklessTurn(t, realcli.Gemini, "terminal", "muster.terminal.turnEnded")
}

// hooklessTurn runs the hook-less scenario for cli; source and hook are
// the evidence that must end the turn.
func hooklessTurn(t *testing.T, cli realcli.CLI, source, hook string) {
	s := realcli.New(t, cli, realcli.Options{})
	sc := &mscenario{t: t, cli: cli, prof: profiles[cli], s: s, m: newMuster(t, s), name: "hl-" + string(cli)}
	logOnFailure(t, s)
	startInShell(sc.m, sc.name, cli)
	// The estimator polls once a second: a few polls with the CLI at its
	// prompt must open no run.
	for range 4 {
		if info := sc.info(); info.RunState != nil {
			t.Fatalf("hook-less %s idle at its prompt is %q (run %s), want no run; screen:\n%s", cli, *info.RunState, runID(info), sc.m.capture(sc.name))
		}
		time.Sleep(time.Second)
	}
	gate := make(chan struct{})
	sc.enqueue(fakemodel.Text("hook-less reply").After(gate))
	run := sc.submit("say hello without hooks", "")
	sc.m.wait(sc.name, "running", turnTimeout)
	time.Sleep(time.Second) // the CLI waits for the model
	w := endTurn(sc, "reply", func() { close(gate) })
	if w.RunID != run || (w.State != "succeeded" && w.Terminal != "succeeded") {
		t.Errorf("the hook-less turn: %+v, want run %s succeeded", w, run)
	}
	sc.m.waitScreen(sc.name, "hook-less reply", turnTimeout)
	x := (&stateRun{sc: sc}).explain()
	if x.Because == nil || x.Because.Source != source || x.Because.HookName != hook {
		t.Errorf("the hook-less turn's evidence: %+v, want %s (%s)", x.Because, source, hook)
	}
	for _, e := range x.Events {
		if e.HookName == "muster.native.launchObserved" {
			t.Errorf("a coarse run opened for the idle %s: %+v", cli, e)
		}
	}
	t.Logf("%s: times to the true state: %s", cli, strings.Join(sc.times, "; "))
}

// startInShell opens a shell pane and types cli's command into it, as a
// user would (Codex 0.169 then runs with its background app-server), and
// waits for the CLI's prompt.
func startInShell(m *musterRun, name string, cli realcli.CLI) {
	m.t.Helper()
	m.must("new", "--name", name, "--dir", m.s.Dir, "--cmd", "bash --norc --noprofile", "--detach")
	m.waitScreen(name, "bash", launchTimeout)
	m.must("send", name, string(cli), "--enter")
	m.waitScreen(name, profiles[cli].idle, launchTimeout)
}

// endTurn runs what ends the session's turn (the model's reply released)
// and waits until `wait --until done,waiting` returns; it logs and records
// how long the truth took: from the action to the return of the wait,
// and inside the daemon from the evidence (its occurredAt: the record's
// time, the signal's arrival) to the commit of the event that ended the
// run (its receivedAt).
func endTurn(sc *mscenario, what string, action func()) proto.WaitSession {
	sc.t.Helper()
	start := time.Now()
	action()
	w := sc.m.wait(sc.name, "done,waiting", turnTimeout)
	total := time.Since(start)
	daemon := "?"
	x := (&stateRun{sc: sc}).explain()
	if b := x.Because; b != nil {
		at, err1 := time.Parse(time.RFC3339Nano, b.OccurredAt)
		got, err2 := time.Parse(time.RFC3339Nano, b.ReceivedAt)
		if err1 == nil && err2 == nil {
			daemon = got.Sub(at).Round(time.Millisecond).String() + " from " + b.Source
		}
	}
	sc.times = append(sc.times, what+": daemon "+daemon+", CLI "+total.Round(10*time.Millisecond).String())
	sc.t.Logf("%s: %s → %s: in the daemon %s; action+wait %s", sc.cli, what, w.State, daemon, total.Round(time.Millisecond))
	return w
}

// logOnFailure logs the daemon's log when the test fails.
func logOnFailure(t *testing.T, s *realcli.Setup) {
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(s.MusterHome, "state", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
	})
}
