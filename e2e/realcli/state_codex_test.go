package realcli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/e2e/realcli"
	"github.com/musterhq/muster/internal/testing/fakemodel"
)

// newStateRun starts cli in a Muster pane with Muster's hooks installed
// (`muster hooks setup`; Codex's hooks trusted as "Trust all" records
// them), for issue 10's state cases.
func newStateRun(t *testing.T, cli realcli.CLI) *stateRun {
	s := realcli.New(t, cli, realcli.Options{})
	sc := &mscenario{t: t, cli: cli, prof: profiles[cli], s: s, m: newMuster(t, s), name: "st-" + string(cli)}
	t.Cleanup(func() {
		t.Logf("%s: times to the true state: %s", cli, strings.Join(sc.times, "; "))
		if dir := os.Getenv("MUSTER_REALCLI_RECORD"); dir != "" {
			recordTranscripts(t, s, cli, dir)
		}
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(s.MusterHome, "state", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
	})
	sc.m.must("hooks", "setup", string(cli))
	if cli == realcli.Codex {
		if err := realcli.TrustCodexHooks(filepath.Join(s.Home, ".codex")); err != nil {
			t.Fatal(err)
		}
	}
	sc.launch()
	return &stateRun{sc: sc}
}

// recordTranscripts copies the CLI's transcripts of the run into dir
// (MUSTER_REALCLI_RECORD; internal/provider/*/testdata was recorded so).
func recordTranscripts(t *testing.T, s *realcli.Setup, cli realcli.CLI, dir string) {
	var pattern string
	switch cli {
	case realcli.Codex:
		pattern = filepath.Join(s.Home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl")
	case realcli.Gemini:
		pattern = filepath.Join(s.Home, ".gemini", "tmp", "*", "chats", "session-*.jsonl")
	}
	m, _ := filepath.Glob(pattern)
	for _, f := range m {
		if b, err := os.ReadFile(f); err == nil {
			_ = os.WriteFile(filepath.Join(dir, string(cli)+"-states-"+filepath.Base(f)), b, 0o644)
		}
	}
	t.Logf("%s: recorded %d transcripts into %s", cli, len(m), dir)
}

// escMidTurnKey: Esc while the model's reply is held ends the run
// interrupted, by the key, with no attention item; the CLI's own late
// signals (Codex's turn_aborted, Gemini's failure-shaped AfterAgent) do
// not change that.
func (st *stateRun) escMidTurnKey(prev string) string {
	sc := st.sc
	gate := make(chan struct{})
	defer close(gate)
	sc.enqueue(fakemodel.Text("never shown: the user pressed Esc").After(gate))
	run := sc.submit("a turn to interrupt", prev)
	sc.m.wait(sc.name, "running", turnTimeout)
	time.Sleep(time.Second) // the CLI is waiting for the model
	var detach func()
	st.act("Esc mid-turn, typed into muster attach", "interrupted", "interrupted", func() { detach = st.typeAttached("\x1b") })
	detach()
	st.because(run, "interrupted", "keystroke", "muster.keystroke.interrupted")
	st.noOpenItems("after Esc mid-turn")
	// What the CLI does after the interrupt arrives within a few seconds:
	// it must leave the run interrupted and raise no item.
	time.Sleep(5 * time.Second)
	st.because(run, "interrupted", "keystroke", "muster.keystroke.interrupted")
	for _, it := range sc.m.attention(sc.name, true) {
		if it.RunID == run {
			sc.t.Errorf("the user's own Esc raised an attention item: %+v", it)
		}
	}
	return run
}

// denyKey: the approval dialog refused with Esc ends the run interrupted
// and resolves its approval item; the command does not run.
func (st *stateRun) denyKey(prev string) string {
	sc := st.sc
	sc.enqueue(fakemodel.Shell("touch denied.txt"))
	run := sc.submit("make a denied file", prev)
	sc.m.wait(sc.name, "waitingApproval", turnTimeout)
	it := st.item(run, "approval-requested")
	sc.m.waitScreen(sc.name, sc.prof.approval, turnTimeout)
	st.act("deny (Esc)", "interrupted", "interrupted", func() { st.key("\x1b") })
	st.because(run, "interrupted", "keystroke", "muster.keystroke.interrupted")
	st.resolved(it.ID)
	st.noOpenItems("after the denial")
	time.Sleep(3 * time.Second)
	if _, err := os.Stat(filepath.Join(sc.s.Dir, "denied.txt")); err == nil {
		sc.t.Error("the denied command ran")
	}
	st.because(run, "interrupted", "keystroke", "muster.keystroke.interrupted")
	return run
}

// approveSlow: a command approved with the CLI's key runs for seconds;
// the run is running (from the key) with the item resolved, then
// succeeds. The command outlasts the check 7 s in with room for a loaded
// machine's slower CLI calls (under load 15 the check came 10 s in), and
// the fake model asks Codex to wait for it (yield_time_ms), or Codex would
// hand it to the background after 10 s and end the turn.
func (st *stateRun) approveSlow(prev string, key string) string {
	sc := st.sc
	sc.enqueue(fakemodel.Shell("sleep 16 && echo slow-done"), fakemodel.Text("after the slow command"))
	run := sc.submit("run a slow command", prev)
	sc.m.wait(sc.name, "waitingApproval", turnTimeout)
	it := st.item(run, "approval-requested")
	sc.m.waitScreen(sc.name, sc.prof.approval, turnTimeout)
	w := st.act("approve a slow command", "running", "running", func() { st.key(key) })
	if w.RunID != run {
		sc.t.Errorf("after the approval: run %s, want %s", w.RunID, run)
	}
	st.because(run, "running", "keystroke", "muster.keystroke.answered")
	st.resolved(it.ID)
	st.noOpenItems("while the approved command runs")
	// Past the 5 s in which an unconfirmed answer goes back to its
	// request: the command still runs, and so must the run.
	time.Sleep(7 * time.Second)
	if info := sc.info(); runState(info) != "running" || runID(info) != run {
		sc.t.Errorf("7 s into the approved command: run %s is %s, want %s running", runID(info), runState(info), run)
	}
	st.noOpenItems("7 s into the approved command")
	w = sc.m.wait(sc.name, "done", turnTimeout)
	if w.RunID != run || (w.State != "succeeded" && w.Terminal != "succeeded") {
		sc.t.Errorf("after the slow command: %+v, want run %s succeeded", w, run)
	}
	return run
}

// TestMusterCodexStates is issue 10's table for Codex 0.169.0 (which fires
// no hook on an Esc or a refused command).
func TestMusterCodexStates(t *testing.T) {
	t.Parallel()
	st := newStateRun(t, realcli.Codex)
	run := st.approveSlow("", "y")
	run = st.escMidTurnKey(run)
	st.denyKey(run)
}
