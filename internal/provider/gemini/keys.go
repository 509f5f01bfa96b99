package gemini

import (
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
)

var _ provider.KeyReader = Provider{}

// Key implements provider.KeyReader for Gemini CLI 0.61.0:
//
//   - Esc while a turn runs cancels it ("Request cancelled"). Gemini then
//     fires AfterAgent with prompt_response "[no response text]", the very
//     payload of a turn that failed on an API error (geminihook maps it to
//     failed): the key is what tells the user's cancel from a failure. It
//     ends the run interrupted first, and the reducer keeps an ended run
//     ended, so the late AfterAgent opens no failure item.
//   - At the tool approval ("Allow execution of …? ● 1. Allow once / 2.
//     Allow for this session / 3. No, suggest changes (esc)"), Enter on the
//     highlighted option, 1 or 2 answer it; Esc and 3 refuse it, which
//     cancels the turn the same way.
func (Provider) Key(input []byte, state proto.RunState) provider.KeyEffect {
	waiting := state == proto.StateWaitingApproval || state == proto.StateWaitingInput
	switch {
	case provider.IsEscKey(input):
		if waiting || state == proto.StateRunning {
			return provider.KeyInterrupt
		}
	case provider.IsCharKey(input, '3'):
		if state == proto.StateWaitingApproval {
			return provider.KeyInterrupt
		}
	case provider.IsEnterKey(input):
		if waiting {
			return provider.KeyAnswer
		}
	case provider.IsCharKey(input, '1'), provider.IsCharKey(input, '2'):
		if state == proto.StateWaitingApproval {
			return provider.KeyAnswer
		}
	}
	return provider.KeyNone
}
