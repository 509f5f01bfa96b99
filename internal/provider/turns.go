package provider

import (
	"context"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/transcript"
)

// TurnReader is a provider whose prompt turns the daemon reads from its
// transcript while the agent runs, for a pane whose hooks are not
// installed (internal/native). A turn's key must be exactly what the
// provider's hooks report as the turn (hookmap.Intent.TurnKey), so that a
// hook arriving mid-turn lands on the run the transcript opened.
type TurnReader interface {
	Provider
	// NewTurnParser returns a parser of one transcript, read from its
	// start.
	NewTurnParser() TurnParser
	// NewTurnLocator returns the finder of one agent run's transcript. It
	// may remember what it read between calls.
	NewTurnLocator(env transcript.Env) TurnLocator
}

// TurnParser reads a transcript one complete line at a time, incrementally.
type TurnParser interface {
	// Line appends what one line says about turns to out and returns it;
	// a line it cannot read says nothing.
	Line(raw []byte, out []Turn) []Turn
}

// TurnLocator finds an agent run's transcript on disk.
type TurnLocator interface {
	// Locate returns the transcript, or "" when there is none (yet) or
	// more than one could be it.
	Locate(ctx context.Context, q TurnQuery) string
}

// TurnQuery is what the daemon knows when it looks for a transcript.
type TurnQuery struct {
	CWD string // the agent's working directory
	// NativeID is the captured session id (a safe file name), "" when
	// none is known: then the transcript is the single one of CWD
	// modified at or after Cutoff, other than Except, that no other pane
	// follows (Taken).
	NativeID string
	Cutoff   time.Time
	Now      time.Time
	// Walk: with a NativeID, search everywhere, not only where a new
	// transcript appears (the expensive search, done now and then).
	Walk   bool
	Except string
	Taken  func(path string) bool
}

// TurnOp says what a transcript record does to a prompt turn.
type TurnOp uint8

const (
	TurnStart TurnOp = iota + 1 // a prompt started the turn Key
	TurnEnd                     // the turn Key ended with Kind
	// TurnUsage: the record says which model answered and how full its
	// context is (Usage); it belongs to no turn, whatever its time.
	TurnUsage
)

// Turn is what one transcript line says about a prompt turn.
type Turn struct {
	Op   TurnOp
	Key  string          // the provider's own turn identifier
	Kind proto.EventKind // for TurnEnd: succeeded, failed or interrupted
	At   time.Time       // the record's timestamp; zero when it has none
	Text string          // TurnStart: the prompt's headline; TurnEnd: the last assistant text
	// HookSilent marks an end the provider's hooks never report (Claude
	// Code's interrupt markers): internal/native applies it even where the
	// hooks report the provider's runs (the fusion rule).
	HookSilent bool
	Usage      Usage // for TurnUsage
}

// Usage is what a transcript record reports of the model and its context
// window, for the dashboard's model and context columns. Each figure is
// the provider's own; zero is unknown, never estimated.
type Usage struct {
	Model string // the model that answered; "" when the record names none
	// Context is the number of tokens the model's context held for the
	// record's reply: the prompt of the last request, cache included.
	Context int64
	// Window is the model's context window, as the provider reports it
	// (Codex) or as the provider package's dated table has it for Model.
	Window int64
}

// TitleReader is a provider whose window titles say what it is doing: the
// compatibility fallback for CLIs without OSC 9;4 or 7501 (research/real-cli
// REPORT.md §5).
type TitleReader interface {
	Provider
	// TitleActivity reads a title: ActivityWorking, ActivityWaiting,
	// ActivityAttention, or "" for nothing known (the title was cleared on
	// exit); ok is false when the title says nothing.
	TitleActivity(title string) (activity string, ok bool)
}

// Pane activities a title may report (internal/native's Activity).
const (
	ActivityWorking   = "working"
	ActivityWaiting   = "waiting"
	ActivityAttention = "attention"
)

// PrivateTurnKeys is a TurnReader whose turn keys are the transcript's
// own, never what its hooks send (Gemini CLI: no hook payload carries a
// turn id), and which does not mark every turn's end. With hooks,
// internal/native applies its HookSilent ends to the surface's current
// run, when that run is the provider's and started before the record;
// without, each turn it starts is a coarse run, which its ends end and
// otherwise the agent's terminal does.
type PrivateTurnKeys interface {
	TurnReader
	PrivateTurnKeys()
}
