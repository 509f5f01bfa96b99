package claude

import (
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
)

var _ provider.KeyReader = Provider{}

// Key implements provider.KeyReader for Claude Code 2.1.328, as measured in
// a Muster pane (e2e/realcli, state_claude_test.go):
//
//   - Esc while a turn runs interrupts it: the prompt goes back into the
//     input box, no hook fires and the transcript gets no marker. Ctrl-C
//     while a turn runs interrupts it too, even with text in the input box
//     (the text stays; a second Ctrl-C clears it). Ctrl-C at a dialog was
//     not measured and counts for nothing.
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
