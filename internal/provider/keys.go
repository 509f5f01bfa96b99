package provider

import (
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
)

// KeyReader is a provider whose reaction to the keys a user types into its
// pane is known: the keystroke evidence of internal/native's fusion rule.
// Muster sees every byte written to a pane (muster attach, muster send),
// so a key that answers a dialog or interrupts a turn moves the run at
// once, where the provider's hooks say nothing.
type KeyReader interface {
	Provider
	// Key says what input, one write to the pane, does to a run of the
	// provider that is in state (running, waitingApproval or
	// waitingInput). It must be cheap: it runs on the input path.
	Key(input []byte, state proto.RunState) KeyEffect
}

// KeyEffect is what a key does to the run it is typed into.
type KeyEffect uint8

const (
	KeyNone      KeyEffect = iota // nothing known: typing, moving a selection
	KeyAnswer                     // answers the pending approval or question: work resumes
	KeyInterrupt                  // ends the turn: Esc mid-turn, a declined approval or question
)

// String names the effect for logs and evidence.
func (k KeyEffect) String() string {
	switch k {
	case KeyAnswer:
		return "answer"
	case KeyInterrupt:
		return "interrupt"
	}
	return "none"
}

// StatusReader is a provider whose CLI reports its own state through its
// terminal (OSC 7501, OSC 9;4) where its hooks are silent: the terminal
// evidence of internal/native's fusion rule.
type StatusReader interface {
	Provider
	// Status says what sig, a status the CLI sent while a run of the
	// provider was in state (running, waitingApproval or waitingInput),
	// proves about that run: running (a request was answered),
	// interrupted or succeeded (the turn ended), or "" for nothing. It
	// must be cheap: it runs for every status signal.
	Status(sig termsignal.Signal, state proto.RunState) proto.EventKind
}

// RequestReader is a provider whose CLI says through its terminal when it
// waits for the user (Codex's OSC 7501 state=blocked, Gemini CLI's
// "✋ Action Required" title): for a pane whose hooks have not been heard
// from, internal/native makes that the run's approval or question.
type RequestReader interface {
	Provider
	// Request reads one terminal signal of the CLI: kind is
	// approval-requested or input-requested while the signal says the CLI
	// waits for the user, "" when it says the CLI no longer waits (it
	// works, it is idle); ok is false when the signal says neither. It must
	// be cheap: it runs on the pane's output path.
	Request(sig termsignal.Signal) (kind proto.EventKind, ok bool)
}
