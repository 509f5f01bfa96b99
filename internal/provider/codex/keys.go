package codex

import (
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
)

var _ provider.KeyReader = Provider{}

// Key implements provider.KeyReader for Codex 0.169.0, which fires no hook
// when the user interrupts a turn or refuses a command:
//
//   - Esc while a turn runs interrupts it ("Conversation interrupted"); the
//     rollout then gets event_msg turn_aborted {"reason":"interrupted"},
//     which confirms it (turns.go, HookSilent).
//   - At the approval dialog ("Would you like to run the following
//     command?"), y ("Yes, proceed"), a ("Yes, and don't ask again …") and
//     Enter on the highlighted option answer it: the command runs, and the
//     run is running until PostToolUse or Stop. Esc and n pick "No, and
//     tell Codex what to do differently", which aborts the turn (the same
//     turn_aborted). The options and their keys are the bundle's
//     (approval overlay of codex-rs 0.169.0).
//
// Enter while a turn runs queues a message and answers nothing.
func (Provider) Key(input []byte, state proto.RunState) provider.KeyEffect {
	waiting := state == proto.StateWaitingApproval || state == proto.StateWaitingInput
	switch {
	case provider.IsEscKey(input):
		if waiting || state == proto.StateRunning {
			return provider.KeyInterrupt
		}
	case provider.IsCharKey(input, 'n'):
		if state == proto.StateWaitingApproval {
			return provider.KeyInterrupt
		}
	case provider.IsEnterKey(input):
		if waiting {
			return provider.KeyAnswer
		}
	case provider.IsCharKey(input, 'y'), provider.IsCharKey(input, 'a'):
		if state == proto.StateWaitingApproval {
			return provider.KeyAnswer
		}
	}
	return provider.KeyNone
}
