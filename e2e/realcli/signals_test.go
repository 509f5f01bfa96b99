package realcli_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/e2e/realcli"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/fakemodel"
)

// TestMusterClaudeSpeaks: Claude Code 2.1.328 in a Muster pane reports its
// own state through the terminal, because Muster answers its OSC 7501
// query and names itself a terminal that reads OSC 9;4 (ConEmuTask). Driven
// only through muster commands: `explain --json` shows the activity and
// the signals the pane sent.
func TestMusterClaudeSpeaks(t *testing.T) {
	t.Parallel()
	seen := runSignalTurn(t, realcli.Claude)
	has := func(want string) bool {
		return slices.ContainsFunc(seen, func(s string) bool { return strings.HasPrefix(s, want) })
	}
	for _, want := range []string{"OSC 9;4;3;", "OSC 9;4;0;"} {
		if !has(want) {
			t.Errorf("Claude Code never sent %q in a Muster pane; seen: %q", want, seen)
		}
	}
	// Its OSC 7501 status was missing in 2 of 8 runs while the emulator's
	// DA1 reply could overtake the pane's answer to its probe (fixed in
	// internal/pane): now required.
	for _, want := range []string{"OSC 7501;state=working:app=claude-code", "OSC 7501;state=idle:app=claude-code"} {
		if !has(want) {
			t.Errorf("Claude Code never sent %q in a Muster pane; seen: %q", want, seen)
		}
	}
}

// TestMusterCodexSignals and TestMusterGeminiSignals record what the
// other two CLIs send in a Muster pane (internal/provider/<name>/doc.go).
func TestMusterCodexSignals(t *testing.T) {
	t.Parallel()
	seen := runSignalTurn(t, realcli.Codex)
	if !slices.ContainsFunc(seen, func(s string) bool { return strings.HasPrefix(s, "OSC 7501;state=working:app=codex") }) {
		t.Errorf("Codex sent no working status; seen: %q", seen)
	}
}

func TestMusterGeminiSignals(t *testing.T) {
	t.Parallel()
	seen := runSignalTurn(t, realcli.Gemini)
	if !slices.ContainsFunc(seen, func(s string) bool { return strings.HasPrefix(s, "OSC 0;") || strings.HasPrefix(s, "OSC 2;") }) {
		t.Errorf("Gemini CLI sent no title that says its state; seen: %q", seen)
	}
}

// runSignalTurn starts cli in a Muster pane, runs one text turn whose reply
// the fake model holds, and returns every activity signal `muster explain
// --json` showed for the pane (evidence strings, in the order first seen),
// logging when the activity said working and waiting.
func runSignalTurn(t *testing.T, cli realcli.CLI) []string {
	s := realcli.New(t, cli, realcli.Options{})
	sc := &mscenario{t: t, cli: cli, prof: profiles[cli], s: s, m: newMuster(t, s), name: "sig-" + string(cli)}
	var seen []string
	explain := func() proto.Activity {
		t.Helper()
		var x proto.Explanation
		sc.m.mustJSON(&x, "explain", sc.name, "--json")
		if x.Activity == nil {
			return proto.Activity{}
		}
		for _, r := range x.Activity.Recent {
			if !slices.Contains(seen, r.Evidence) {
				seen = append(seen, r.Evidence)
			}
		}
		return *x.Activity
	}
	defer func() {
		b, _ := json.Marshal(seen)
		t.Logf("%s in a Muster pane sent: %s", cli, b)
	}()

	if cli != realcli.Claude {
		sc.m.must("hooks", "setup", string(cli))
		if cli == realcli.Codex {
			if err := realcli.TrustCodexHooks(s.Home + "/.codex"); err != nil {
				t.Fatal(err)
			}
		}
	}
	sc.launch()
	explain()

	gate := make(chan struct{})
	sc.enqueue(fakemodel.Text("signals reply from the fake " + string(cli)).After(gate))
	start := time.Now()
	sc.submit("say hello", "")
	var a proto.Activity
	took := sc.m.waitFor(sc.name, "activity working", turnTimeout, func() bool { a = explain(); return a.State == "working" })
	t.Logf("%s: prompt sent → activity working in %s, from %q", cli, took.Round(10*time.Millisecond), a.Evidence)
	// Give the terminal signals of the working state time to arrive while
	// the reply is held (a CLI sends them once, on the change).
	sc.m.waitFor(sc.name, "a working signal in the pane's recent signals", turnTimeout, func() bool {
		explain()
		return slices.ContainsFunc(seen, func(s string) bool {
			return strings.Contains(strings.ToLower(s), "working") || strings.HasPrefix(s, "OSC 9;4;3")
		})
	})
	close(gate)
	sc.m.wait(sc.name, "done", turnTimeout)
	took = sc.m.waitFor(sc.name, "activity waiting", turnTimeout, func() bool { a = explain(); return a.State == "waiting" })
	t.Logf("%s: turn done → activity waiting %s after the done state, from %q (turn %s)", cli,
		took.Round(10*time.Millisecond), a.Evidence, time.Since(start).Round(10*time.Millisecond))
	// Both of a pair of signals sent on the same change show up: poll a
	// moment for the second.
	poll(3*time.Second, func() bool { explain(); return false })
	return seen
}
