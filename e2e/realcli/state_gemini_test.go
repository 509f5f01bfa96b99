package realcli_test

import (
	"testing"

	"github.com/musterhq/muster/e2e/realcli"
)

// TestMusterGeminiStates is issue 10's table for Gemini CLI 0.61.0: an Esc
// mid-turn ("Request cancelled") is interrupted, not failed, and raises no
// failure item, although Gemini's AfterAgent then carries the payload of a
// failed turn; a refused tool is interrupted with its item resolved.
func TestMusterGeminiStates(t *testing.T) {
	t.Parallel()
	st := newStateRun(t, realcli.Gemini)
	run := st.escMidTurnKey("")
	st.denyKey(run)
}
