package realcli_test

import (
	"strings"
	"testing"

	"github.com/musterhq/muster/e2e/realcli"
)

// TestMusterGeminiStates is issue 10's table for Gemini CLI 0.61.0: an Esc
// mid-turn ("Request cancelled") is interrupted, not failed, and raises no
// failure item, although Gemini's AfterAgent then carries the payload of a
// failed turn; a refused tool is interrupted with its item resolved; an
// API error, whose AfterAgent is the same payload, is still failed with
// its item. What tells the cancel from the failure is the chat file: the
// AfterAgent of the cancelled turn must be mapped interrupted (its chat
// file already ends with the cancel when the hook runs). The daemon's own
// reading of the chat file acts only when the key was missed (the key
// ended the run first here), so internal/native tests it with the chat
// file this test records.
//
// MUSTER_REALCLI_RECORD=DIR copies the chat file there at the end
// (internal/provider/gemini/testdata/states was recorded so).
func TestMusterGeminiStates(t *testing.T) {
	t.Parallel()
	st := newStateRun(t, realcli.Gemini)
	run := st.escMidTurnKey("")
	st.hookKind(run, "AfterAgent", "interrupted")
	run = st.denyKey(run)
	run = st.sc.failedTurn(run)
	st.hookKind(run, "AfterAgent", "failed")
}

// hookKind checks that hook reached run mapped to kind.
func (st *stateRun) hookKind(run, hook, kind string) {
	sc := st.sc
	sc.t.Helper()
	got := ""
	poll(turnTimeout, func() bool {
		for _, e := range st.explain().Events {
			if e.RunID == run && e.HookName == hook {
				got = e.Kind + " (" + e.Message + ")"
				return true
			}
		}
		return false
	})
	if !strings.HasPrefix(got, kind+" ") {
		sc.t.Errorf("%s of run %s: %q, want %s", hook, run, got, kind)
	}
}
