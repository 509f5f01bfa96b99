package realcli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/e2e/realcli"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/fakemodel"
)

// TestMusterClaudeStates is issue 10's table for Claude Code 2.1.328: the
// cases where no hook reports what the user did, each driven only through
// `muster new/send/wait/ls --json/attention --json/explain --json`, with
// the run state, the attention item and the evidence source checked, and
// the time from the user's action to the true state logged.
//
// MUSTER_REALCLI_RECORD=DIR copies the session's transcript there at the
// end (internal/native/testdata was recorded so).
func TestMusterClaudeStates(t *testing.T) {
	t.Parallel()
	s := realcli.New(t, realcli.Claude, realcli.Options{})
	sc := &mscenario{t: t, cli: realcli.Claude, prof: profiles[realcli.Claude], s: s, m: newMuster(t, s), name: "st-claude"}
	st := &stateRun{sc: sc}
	defer func() {
		t.Logf("claude: times to the true state: %s", strings.Join(sc.times, "; "))
		if dir := os.Getenv("MUSTER_REALCLI_RECORD"); dir != "" && sc.id != "" {
			src := filepath.Join(s.Home, ".claude", "projects", dashed(s.Dir), sc.id+".jsonl")
			if b, err := os.ReadFile(src); err == nil {
				_ = os.WriteFile(filepath.Join(dir, "claude-states-"+sc.id[:8]+".jsonl"), b, 0o644)
			}
		}
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(s.MusterHome, "state", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
	}()
	sc.launch()
	run := st.denyWithArrows("")
	run = st.slowTool(run)
	run = st.questionAnswered(run)
	run = st.questionDeclined(run)
	run = st.ctrlCAtDialog(run)
	run = st.escMidTurn(run)
	st.ctrlCMidTurn(run)
}

// stateRun drives the state scenarios of one Claude Code session.
type stateRun struct{ sc *mscenario }

func (st *stateRun) explain() proto.Explanation {
	st.sc.t.Helper()
	var x proto.Explanation
	st.sc.m.mustJSON(&x, "explain", st.sc.name, "--json")
	return x
}

// typeAttached presses keys as a person does: into `muster attach` running
// in a PTY of its own, whose reader (the daemon's or the client's) must
// pass them on as typed (a lone Esc once never reached the pane). It
// returns the detach.
func (st *stateRun) typeAttached(keys string) (detach func()) {
	st.sc.t.Helper()
	c := attachPTY(st.sc.t, st.sc.m, st.sc.name)
	c.typeKeys(keys)
	return c.detach
}

// key types raw bytes into the pane with `muster send`, as a user's key
// reaches it through `muster attach`.
func (st *stateRun) key(b string) {
	st.sc.t.Helper()
	st.sc.m.must("send", st.sc.name, b)
}

// act runs the user's action and waits until the session reaches until
// (the run moved to kind);
// it returns the wait's result and logs how long the truth took: from the
// start of the `muster send` that typed the key to the return of `muster
// wait` (two CLI runs included), and inside the daemon, from the moment the
// key reached the pane to the commit of the event that made the state
// true (explain's evidence times).
func (st *stateRun) act(what, until, kind string, action func()) proto.WaitSession {
	st.sc.t.Helper()
	start := time.Now()
	action()
	sent := time.Since(start)
	w := st.sc.m.wait(st.sc.name, until, turnTimeout)
	total := time.Since(start)
	daemon := "?"
	if d, ok := st.daemonLatency(w.RunID, kind); ok {
		daemon = d.Round(10 * time.Microsecond).String()
	}
	st.sc.times = append(st.sc.times, fmt.Sprintf("%s: daemon %s, CLI %s", what, daemon, total.Round(10*time.Millisecond)))
	st.sc.t.Logf("%s: %s → %s: in the daemon %s; send %s, send+wait %s", st.sc.cli, what, w.State, daemon,
		sent.Round(time.Millisecond), total.Round(time.Millisecond))
	st.signals(what, start)
	return w
}

// signals logs the terminal signals the pane sent since the action
// started (explain's recent activity), with their delay: what the CLI says
// through its terminal about each case.
func (st *stateRun) signals(what string, start time.Time) {
	st.sc.t.Helper()
	time.Sleep(time.Second) // a status that follows the state a moment later
	x := st.explain()
	if x.Activity == nil {
		return
	}
	var got []string
	for _, r := range x.Activity.Recent {
		if at, err := time.Parse(time.RFC3339Nano, r.At); err == nil && at.After(start) {
			got = append(got, fmt.Sprintf("%s +%s", r.Evidence, at.Sub(start).Round(time.Millisecond)))
		}
	}
	st.sc.t.Logf("%s: %s: the terminal said %q", st.sc.cli, what, got)
}

// daemonLatency is the time from the user's key reaching the pane (the
// occurredAt of the run's newest keystroke event) to the commit of the
// first event after it that moved the run to kind (its receivedAt).
func (st *stateRun) daemonLatency(run, kind string) (time.Duration, bool) {
	x := st.explain()
	var keyAt time.Time
	for _, e := range x.Events {
		if e.RunID == run && strings.HasPrefix(e.HookName, "muster.keystroke.") {
			if at, err := time.Parse(time.RFC3339Nano, e.OccurredAt); err == nil && at.After(keyAt) {
				keyAt = at
			}
		}
	}
	if keyAt.IsZero() {
		return 0, false
	}
	for _, e := range x.Events {
		got, err := time.Parse(time.RFC3339Nano, e.ReceivedAt)
		if e.RunID == run && e.Kind == kind && e.Effect == "applied" && err == nil && !got.Before(keyAt) {
			if e.Source == "transcript" {
				// How much of it the CLI took to write its record.
				if wrote, err := time.Parse(time.RFC3339Nano, e.OccurredAt); err == nil {
					st.sc.t.Logf("claude: the CLI wrote the record %s after the key, Muster read it %s later",
						wrote.Sub(keyAt).Round(time.Millisecond), got.Sub(wrote).Round(time.Millisecond))
				}
			}
			return got.Sub(keyAt), true
		}
	}
	return 0, false
}

// because checks the evidence behind the session's state: the run, its
// state, the source and hook of the event that put it there.
func (st *stateRun) because(run, state, source, hook string) proto.Explanation {
	st.sc.t.Helper()
	x := st.explain()
	if x.State == nil || x.RunID == nil || *x.RunID != run || x.Because == nil {
		st.sc.t.Fatalf("explain: %+v; want run %s", x, run)
	}
	got := *x.State
	if got == "idle" {
		got = x.Terminal
	}
	if got != state || x.Because.Source != source || x.Because.HookName != hook {
		st.sc.t.Errorf("explain: run %s is %s because %s %s (%q); want %s because %s %s", run, got,
			x.Because.Source, x.Because.HookName, x.Because.Message, state, source, hook)
	}
	return x
}

// noOpenItems checks that the session has no open attention item: the
// user's own action raises none and resolves the request's.
func (st *stateRun) noOpenItems(what string) {
	st.sc.t.Helper()
	if open := st.sc.m.attention(st.sc.name, false); len(open) != 0 {
		st.sc.t.Errorf("%s: open attention items %+v, want none", what, open)
	}
}

// item returns the one open attention item of run.
func (st *stateRun) item(run, reason string) proto.AttentionItem {
	st.sc.t.Helper()
	items := st.sc.m.attention(st.sc.name, false)
	if len(items) != 1 || items[0].RunID != run || items[0].Reason != reason {
		st.sc.t.Fatalf("attention: %+v; want one open %s item of run %s", items, reason, run)
	}
	return items[0]
}

// resolved checks that item id was resolved.
func (st *stateRun) resolved(id int64) {
	st.sc.t.Helper()
	for _, it := range st.sc.m.attention(st.sc.name, true) {
		if it.ID == id {
			if it.Open {
				st.sc.t.Errorf("item %d is still open", id)
			}
			return
		}
	}
	st.sc.t.Errorf("item %d is gone", id)
}

// denyWithArrows: a permission dialog answered "No" with the arrows and
// Enter. Enter answers the dialog (running, from the key); the transcript's
// "[Request interrupted by user for tool use]" ends the run interrupted.
func (st *stateRun) denyWithArrows(prev string) string {
	sc := st.sc
	sc.enqueue(fakemodel.Shell("touch denied.txt"))
	run := sc.submit("make a denied file", prev)
	sc.m.wait(sc.name, "waitingApproval", turnTimeout)
	it := st.item(run, "approval-requested")
	sc.m.waitScreen(sc.name, sc.prof.approval, turnTimeout)
	for range 6 {
		if selectedLine(sc.m.capture(sc.name), "No") {
			break
		}
		st.key(realcli.KeyDown.Bytes)
		time.Sleep(300 * time.Millisecond)
	}
	if !selectedLine(sc.m.capture(sc.name), "No") {
		sc.t.Fatalf("could not select No; screen:\n%s", sc.m.capture(sc.name))
	}
	st.act("deny (arrows, Enter)", "interrupted", "interrupted", func() { sc.m.must("send", sc.name, "", "--enter") })
	// Two pieces of evidence say it, whichever is read first: Claude's
	// OSC 7501 idle and its transcript's marker.
	x := st.explain()
	if x.Because != nil && x.Because.Source == "terminal" {
		x = st.because(run, "interrupted", "terminal", "muster.terminal.status")
		if !strings.Contains(x.Because.Message, "state=idle") {
			sc.t.Errorf("the denial's evidence message is %q, want Claude's idle status", x.Because.Message)
		}
	} else {
		x = st.because(run, "interrupted", "transcript", "muster.transcript.turnEnded")
		if x.Because != nil && !strings.Contains(x.Because.Message, "[Request interrupted by user for tool use]") {
			sc.t.Errorf("the denial's evidence message is %q, want the transcript's marker", x.Because.Message)
		}
	}
	sc.t.Logf("%s: the denial was read from %s", sc.cli, x.Because.Source)
	st.resolved(it.ID)
	st.noOpenItems("after the denial")
	if _, err := os.Stat(filepath.Join(sc.s.Dir, "denied.txt")); err == nil {
		sc.t.Error("the denied command ran")
	}
	return run
}

// selectedLine reports whether the dialog's cursor (❯) is on an option
// whose text contains label.
func selectedLine(screen, label string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, "❯"); i >= 0 && strings.Contains(l[i:], label) && strings.ContainsAny(l[i:], "0123456789") {
			return true
		}
	}
	return false
}

// slowTool: an approved tool that takes a while is running (no hook fires
// between PermissionRequest and PostToolUse: the Enter is the evidence),
// and an Esc during it ends the run interrupted.
func (st *stateRun) slowTool(prev string) string {
	sc := st.sc
	sc.enqueue(fakemodel.Shell("timeout 30 tail -f /dev/null"))
	run := sc.submit("sleep a while", prev)
	sc.m.wait(sc.name, "waitingApproval", turnTimeout)
	it := st.item(run, "approval-requested")
	sc.m.waitScreen(sc.name, sc.prof.approval, turnTimeout)
	w := st.act("approve a slow tool", "running", "running", func() { sc.m.must("send", sc.name, "", "--enter") })
	if w.RunID != run {
		sc.t.Errorf("after the approval: %+v, want run %s running", w, run)
	}
	st.resolved(it.ID)
	// Claude Code 2.1.328 now and then drops the Enter that approves (seen
	// in 1 of 5 suite runs: the dialog stayed up while Muster's keystroke
	// evidence already said running, the cost of a lost key that issue 10
	// records). The scenario re-sends it, logged, so the rest still runs.
	if !poll(15*time.Second, func() bool { return strings.Contains(sc.m.capture(sc.name), "esc to interrupt") }) {
		sc.t.Logf("%s: the CLI dropped the approving Enter; sending it again", sc.cli)
		sc.m.must("send", sc.name, "", "--enter")
	}
	sc.m.waitScreen(sc.name, "esc to interrupt", turnTimeout)
	time.Sleep(3 * time.Second)
	if info := sc.info(); runState(info) != "running" || runID(info) != run {
		sc.t.Errorf("3 s into the approved tool: run %s is %s, want %s running", runID(info), runState(info), run)
	}
	st.noOpenItems("while the approved tool runs")
	st.act("Esc during the tool", "interrupted", "interrupted", func() { st.key("\x1b") })
	st.because(run, "interrupted", "keystroke", "muster.keystroke.interrupted")
	st.noOpenItems("after the Esc")
	sc.m.waitScreen(sc.name, "Interrupted", turnTimeout)
	return run
}

// askUserQuestion is a question with two options.
var askUserQuestion = map[string]any{"questions": []any{map[string]any{
	"question": "Which color do you want?", "header": "Color", "multiSelect": false,
	"options": []any{map[string]any{"label": "Red", "description": "warm"}, map[string]any{"label": "Blue", "description": "cold"}},
}}}

// question asks the model's question and checks it is waitingInput with an
// input-requested item whose message is the question.
func (st *stateRun) question(prompt, prev string) (string, proto.AttentionItem) {
	sc := st.sc
	run := sc.submit(prompt, prev)
	sc.m.wait(sc.name, "waitingInput", turnTimeout)
	it := st.item(run, "input-requested")
	if it.Message != "Which color do you want?" {
		sc.t.Errorf("the question's item says %q, want the question", it.Message)
	}
	st.because(run, "waitingInput", "hook", "PermissionRequest")
	sc.m.waitScreen(sc.name, "Which color do you want?", turnTimeout)
	return run, it
}

// questionAnswered: Enter picks the highlighted answer; the run goes on
// and succeeds.
func (st *stateRun) questionAnswered(prev string) string {
	sc := st.sc
	sc.enqueue(fakemodel.Tool("AskUserQuestion", askUserQuestion), fakemodel.Text("you picked a color"))
	run, it := st.question("ask me a question", prev)
	time.Sleep(500 * time.Millisecond) // the dialog takes keys once drawn
	w := st.act("answer a question", "running,done", "running", func() { sc.m.must("send", sc.name, "", "--enter") })
	if w.RunID != run {
		sc.t.Errorf("after the answer: %+v, want run %s", w, run)
	}
	st.resolved(it.ID)
	w = sc.m.wait(sc.name, "done", turnTimeout)
	if w.RunID != run || (w.State != "succeeded" && w.Terminal != "succeeded") {
		sc.t.Errorf("after the answered question: %+v, want run %s succeeded", w, run)
	}
	sc.m.waitScreen(sc.name, "you picked a color", turnTimeout)
	if turns := sc.s.Server.Turns(); len(turns) == 0 {
		sc.t.Error("no model turn")
	} else if out, ok := turns[len(turns)-1].ToolOutput(); !ok || !strings.Contains(out, "Red") {
		sc.t.Errorf("the model got the tool output %q, want the answer Red", out)
	}
	st.noOpenItems("after the answer")
	return run
}

// questionDeclined: Esc declines the question and ends the run
// interrupted; the transcript's marker confirms it.
func (st *stateRun) questionDeclined(prev string) string {
	sc := st.sc
	sc.enqueue(fakemodel.Tool("AskUserQuestion", askUserQuestion))
	run, it := st.question("ask me again", prev)
	time.Sleep(500 * time.Millisecond)
	st.act("decline a question (Esc)", "interrupted", "interrupted", func() { st.key("\x1b") })
	x := st.because(run, "interrupted", "keystroke", "muster.keystroke.interrupted")
	st.resolved(it.ID)
	st.noOpenItems("after the decline")
	sc.m.waitScreen(sc.name, "Declined to answer", turnTimeout)
	if x.Because != nil && x.Because.Message != `Escape "\x1b" typed while waitingInput` {
		sc.t.Errorf("the decline's evidence message is %q, want the key", x.Because.Message)
	}
	return run
}

// ctrlCAtDialog: Ctrl-C at a permission dialog does nothing in Claude
// Code 2.1.328 (the dialog stays, "Esc to cancel", and no status or hook
// follows; measured), so the run stays waitingApproval with its item open;
// the Esc after it denies.
func (st *stateRun) ctrlCAtDialog(prev string) string {
	sc := st.sc
	sc.enqueue(fakemodel.Shell("touch cancelled.txt"))
	run := sc.submit("make a cancelled file", prev)
	sc.m.wait(sc.name, "waitingApproval", turnTimeout)
	it := st.item(run, "approval-requested")
	sc.m.waitScreen(sc.name, sc.prof.approval, turnTimeout)
	time.Sleep(500 * time.Millisecond) // the dialog takes keys once drawn
	st.key("\x03")
	time.Sleep(2 * time.Second)
	if !strings.Contains(sc.m.capture(sc.name), sc.prof.approval) {
		sc.t.Logf("%s: Ctrl-C closed the dialog; screen:\n%s", sc.cli, sc.m.capture(sc.name))
	}
	if info := sc.info(); runState(info) != "waitingApproval" || runID(info) != run {
		sc.t.Errorf("2 s after Ctrl-C at the dialog: run %s is %s, want %s waitingApproval", runID(info), runState(info), run)
	}
	st.item(run, "approval-requested")
	st.act("Esc after Ctrl-C at a dialog", "interrupted", "interrupted", func() { st.key("\x1b") })
	st.because(run, "interrupted", "keystroke", "muster.keystroke.interrupted")
	st.resolved(it.ID)
	st.noOpenItems("after the Esc")
	if _, err := os.Stat(filepath.Join(sc.s.Dir, "cancelled.txt")); err == nil {
		sc.t.Error("the cancelled command ran")
	}
	return run
}

// escMidTurn: Esc while the model answers; Claude Code writes no marker
// and fires no hook, so the key is the evidence.
func (st *stateRun) escMidTurn(prev string) string {
	sc := st.sc
	gate := make(chan struct{})
	defer close(gate)
	sc.enqueue(fakemodel.Text("never shown").After(gate))
	run := sc.submit("hold on", prev)
	sc.m.wait(sc.name, "running", turnTimeout)
	sc.m.waitScreen(sc.name, "esc to interrupt", turnTimeout)
	var detach func()
	st.act("Esc mid-turn, typed into muster attach", "interrupted", "interrupted", func() { detach = st.typeAttached("\x1b") })
	detach()
	st.because(run, "interrupted", "keystroke", "muster.keystroke.interrupted")
	st.noOpenItems("after Esc mid-turn")
	sc.m.waitFor(sc.name, "the idle prompt after the Esc", turnTimeout, func() bool {
		return !strings.Contains(sc.m.capture(sc.name), "esc to interrupt")
	})
	if w := sc.m.wait(sc.name, "done,waiting", 5*time.Second); w.RunID != run {
		sc.t.Errorf("wait --until done,waiting after the Esc: %+v", w)
	}
	return run
}

// ctrlCMidTurn: Ctrl-C while the model answers interrupts the turn as Esc
// does (the Esc step left its prompt in the input box, which Ctrl-C keeps).
func (st *stateRun) ctrlCMidTurn(prev string) {
	sc := st.sc
	gate := make(chan struct{})
	defer close(gate)
	sc.enqueue(fakemodel.Text("never shown either").After(gate))
	run := sc.submit(" and hold on again", prev)
	sc.m.wait(sc.name, "running", turnTimeout)
	sc.m.waitScreen(sc.name, "esc to interrupt", turnTimeout)
	st.act("Ctrl-C mid-turn", "interrupted", "interrupted", func() { st.key("\x03") })
	st.because(run, "interrupted", "keystroke", "muster.keystroke.interrupted")
	st.noOpenItems("after Ctrl-C mid-turn")
	sc.m.waitFor(sc.name, "the idle prompt after Ctrl-C", turnTimeout, func() bool {
		return !strings.Contains(sc.m.capture(sc.name), "esc to interrupt")
	})
}
