package claude

import (
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/termsignal"
)

var (
	_ provider.KeyReader    = Provider{}
	_ provider.StatusReader = Provider{}
)

// Key implements provider.KeyReader for Claude Code 2.1.328, as measured in
// a Muster pane (e2e/realcli, state_claude_test.go):
//
//   - Esc while a turn runs interrupts it: the prompt goes back into the
//     input box, no hook fires and the transcript gets no marker. Ctrl-C
//     while a turn runs interrupts it too, even with text in the input box
//     (the text stays; a second Ctrl-C clears it). Ctrl-C at a permission
//     dialog does nothing: the dialog stays up ("Esc to cancel") and no
//     status follows (measured, TestMusterClaudeStates ctrlCAtDialog), so
//     it counts for nothing there.
//   - Esc at a permission dialog is its "No": the transcript then gets
//     "[Request interrupted by user for tool use]" (the marker confirms
//     it); at an AskUserQuestion dialog it declines the question, with the
//     same marker.
//   - Enter at a dialog picks the highlighted option; a digit picks that
//     option of a permission dialog. Either answers it: the run is
//     running until the next hook or the transcript says otherwise (a
//     "No" picked with the arrows and Enter ends with the marker).
//
// Esc arrives as a lone ESC byte, or in the kitty keyboard protocol
// (CSI 27 u, which Claude Code asks the terminal for) when the attached
// terminal speaks it; Enter as CR, or CSI 13 u; Ctrl-C as ETX, or
// CSI 99;5 u.
func (Provider) Key(input []byte, state proto.RunState) provider.KeyEffect {
	switch {
	case provider.IsEscKey(input):
		switch state {
		case proto.StateRunning, proto.StateWaitingApproval, proto.StateWaitingInput:
			return provider.KeyInterrupt
		}
	case provider.IsEnterKey(input):
		if state == proto.StateWaitingApproval || state == proto.StateWaitingInput {
			return provider.KeyAnswer
		}
	case provider.IsCtrlCKey(input):
		if state == proto.StateRunning {
			return provider.KeyInterrupt
		}
	case len(input) == 1 && '1' <= input[0] && input[0] <= '9':
		if state == proto.StateWaitingApproval {
			return provider.KeyAnswer
		}
	}
	return provider.KeyNone
}

// Status implements provider.StatusReader for Claude Code 2.1.328's OSC
// 7501 statuses (app=claude-code), as measured in a Muster pane
// (e2e/realcli TestMusterClaudeStates logs them per case):
//
//   - state=idle follows every end of a turn that fires no hook: Esc or
//     Ctrl-C mid-turn, a denied permission (Esc, or "No" with the arrows
//     and Enter), a declined question, Esc during an approved tool. The
//     bundle's status is idle when the last turn "stopped" (or none ran
//     yet); a completed turn says done and a failed one error (or idle,
//     for an auth failure the user has since signed in from), so idle
//     while a run is open is its interrupt.
//   - state=working while a dialog waits: it was answered (an approval,
//     a picked answer), whichever key did it.
//   - done and error are left to the Stop and StopFailure hooks, which
//     follow them and carry the reply or the error (and, without hooks,
//     to the transcript).
//
// OSC 9;4 says less (progress removed after done and after idle alike):
// progress shown while a dialog waits is its answer, nothing more.
func (Provider) Status(sig termsignal.Signal, state proto.RunState) proto.EventKind {
	waiting := state == proto.StateWaitingApproval || state == proto.StateWaitingInput
	switch sig.Kind {
	case termsignal.KindProgress:
		if waiting && sig.Progress != termsignal.ProgressRemove {
			return proto.KindRunning
		}
	case termsignal.KindAgentStatus:
		if app := sig.Param("app"); app != "" && app != "claude-code" {
			return ""
		}
		switch sig.State {
		case "idle":
			if waiting || state == proto.StateRunning {
				return proto.KindInterrupted
			}
		case "working":
			if waiting {
				return proto.KindRunning
			}
		}
	}
	return ""
}
