package runstate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// Source says where an event came from, for explain.
type Source string

const (
	SourceHook    Source = "hook"    // a provider hook through events.sock
	SourceSweep   Source = "sweep"   // muster.startupSweep
	SourceSurface Source = "surface" // muster.surfaceClosed: the pane closed
	SourceNative  Source = "native"  // muster.native.*: native run estimation
	// The fusion rule (internal/native): evidence other than hooks where a
	// provider's hooks are silent.
	SourceTranscript Source = "transcript" // muster.transcript.*: the agent's own transcript
	SourceKeystroke  Source = "keystroke"  // muster.keystroke.*: what the user typed into the pane
	SourceTerminal   Source = "terminal"   // muster.terminal.*: the agent's terminal signals
)

// SourceOfHook is the source of an event the daemon synthesized, by its
// hook name: muster.transcript.*, muster.keystroke.* and muster.terminal.*
// are the fusion rule's; everything else is native estimation.
func SourceOfHook(hookName string) Source {
	for _, s := range []Source{SourceTranscript, SourceKeystroke, SourceTerminal} {
		if strings.HasPrefix(hookName, proto.ReservedHookPrefix+string(s)+".") {
			return s
		}
	}
	return SourceNative
}

// Event is the reducer's view of one accepted event.
type Event struct {
	ID              string
	RunID           string
	SessionID       string // the durable Muster session the surface hosts
	SurfaceID       string
	NativeSessionID string // the provider's own session id; "" when null
	Provider        string
	Kind            proto.EventKind
	HookName        string
	Message         string
	OccurredAt      time.Time
	ReceivedAt      time.Time
	Source          Source
}

// Evidence is the provenance of a state: which event, which hook, when.
type Evidence struct {
	EventID    string          `json:"event_id"`
	Kind       proto.EventKind `json:"kind"`
	HookName   string          `json:"hook_name,omitempty"`
	Provider   string          `json:"provider"`
	Source     Source          `json:"source"`
	Message    string          `json:"message,omitempty"`
	OccurredAt time.Time       `json:"occurred_at"`
	ReceivedAt time.Time       `json:"received_at"`
}

func evidenceOf(ev Event) Evidence {
	return Evidence{
		EventID: ev.ID, Kind: ev.Kind, HookName: ev.HookName, Provider: ev.Provider,
		Source: ev.Source, Message: ev.Message, OccurredAt: ev.OccurredAt, ReceivedAt: ev.ReceivedAt,
	}
}

// RunKey identifies a run.
type RunKey struct {
	SessionID string
	RunID     string
}

// Run is the state of one run. State is never StateIdle.
type Run struct {
	SessionID       string         `json:"session_id"`
	RunID           string         `json:"run_id"`
	SurfaceID       string         `json:"surface_id"`
	Provider        string         `json:"provider"`
	NativeSessionID string         `json:"native_session_id,omitempty"`
	State           proto.RunState `json:"state"`
	StartedAt       time.Time      `json:"started_at"`
	UpdatedAt       time.Time      `json:"updated_at"` // time (Event.At) of the newest applied event
	EndedAt         time.Time      `json:"ended_at"`   // zero unless terminal
	ImpliedStart    bool           `json:"implied_start,omitempty"`
	Seq             uint64         `json:"seq"`     // arrival order of the newest applied event
	Because         Evidence       `json:"because"` // the event that put the run in State
	Last            Evidence       `json:"last"`    // the newest event applied to the run
}

// Key returns the run's key.
func (r *Run) Key() RunKey { return RunKey{r.SessionID, r.RunID} }

// Terminal reports whether s is final for its run.
func Terminal(s proto.RunState) bool {
	switch s {
	case proto.StateSucceeded, proto.StateFailed, proto.StateInterrupted, proto.StateDisconnected:
		return true
	}
	return false
}

// StateFor maps an event kind to the state it puts its run in.
func StateFor(k proto.EventKind) proto.RunState {
	switch k {
	case proto.KindStarted, proto.KindRunning:
		return proto.StateRunning
	case proto.KindInputRequested:
		return proto.StateWaitingInput
	case proto.KindApprovalRequested:
		return proto.StateWaitingApproval
	case proto.KindSucceeded:
		return proto.StateSucceeded
	case proto.KindFailed:
		return proto.StateFailed
	case proto.KindInterrupted:
		return proto.StateInterrupted
	case proto.KindDisconnected:
		return proto.StateDisconnected
	}
	return ""
}

// Effect says what an event did to its run.
type Effect string

const (
	EffectApplied   Effect = "applied"   // the run moved to a new state (or was created)
	EffectConfirmed Effect = "confirmed" // same state; accepted as newer evidence
	EffectLate      Effect = "late"      // older than the run's newest event; state kept
	EffectFinal     Effect = "final"     // the run had already ended; nothing changed
)

// Rules are the reducer's tunables.
type Rules struct {
	IdleAfter    time.Duration // quiet time after a terminal state before idle
	LongRun      time.Duration // a success this long or longer opens an item
	ResolvedTTL  time.Duration // how long resolved items stay listed
	RunRetention time.Duration // ended, non-current runs older than this are pruned
}

// DefaultRules are the documented defaults.
func DefaultRules() Rules {
	return Rules{
		IdleAfter:    2 * time.Minute,
		LongRun:      5 * time.Minute,
		ResolvedTTL:  24 * time.Hour,
		RunRetention: 7 * 24 * time.Hour,
	}
}

// Item is one attention item.
type Item struct {
	ID         int64
	SessionID  string
	SurfaceID  string
	RunID      string
	Provider   string
	Reason     proto.EventKind // approval-requested, input-requested, failed, disconnected, succeeded
	Message    string
	EventID    string
	OpenedAt   time.Time // time (Event.At) of the event that opened it
	ResolvedAt time.Time // zero while open
	Resolution string    // why it resolved
}

// Open reports whether the item still needs the user.
func (it *Item) Open() bool { return it.ResolvedAt.IsZero() }

// Resolutions.
const (
	ResolvedAcknowledged = "acknowledged"
	ResolvedSuperseded   = "superseded by a newer run"
)

func resolvedMovedOn(s proto.RunState) string { return "run moved on to " + string(s) }

// session is what the board remembers about one Muster session.
type session struct {
	current         RunKey
	hasCurrent      bool
	nativeSessionID string
	lastEventAt     time.Time // newest time (Event.At) of any event of the session
	surfaceID       string
}

// Board holds every known run, session and attention item. It is not safe
// for concurrent use. It remembers which runs and items changed since the
// last ClearChanges, for persisting.
type Board struct {
	rules      Rules
	runs       map[RunKey]*Run
	sessions   map[string]*session
	surfaces   map[string]RunKey // surface id → its current run
	items      map[int64]*Item
	open       map[RunKey]map[proto.EventKind]int64
	nextItem   int64
	seq        uint64
	dirtyRuns  map[RunKey]struct{}
	dirtyItems map[int64]struct{}
}

// NewBoard returns an empty board. Zero fields of rules take their defaults.
func NewBoard(rules Rules) *Board {
	d := DefaultRules()
	if rules.IdleAfter <= 0 {
		rules.IdleAfter = d.IdleAfter
	}
	if rules.LongRun <= 0 {
		rules.LongRun = d.LongRun
	}
	if rules.ResolvedTTL <= 0 {
		rules.ResolvedTTL = d.ResolvedTTL
	}
	if rules.RunRetention <= 0 {
		rules.RunRetention = d.RunRetention
	}
	return &Board{
		rules:      rules,
		runs:       map[RunKey]*Run{},
		sessions:   map[string]*session{},
		surfaces:   map[string]RunKey{},
		items:      map[int64]*Item{},
		open:       map[RunKey]map[proto.EventKind]int64{},
		nextItem:   1,
		dirtyRuns:  map[RunKey]struct{}{},
		dirtyItems: map[int64]struct{}{},
	}
}

// Rules returns the board's rules.
func (b *Board) Rules() Rules { return b.rules }

// Load fills an empty board with persisted runs and items. Session
// summaries are rebuilt from the runs.
func (b *Board) Load(runs []Run, items []Item) {
	for i := range runs {
		r := runs[i]
		b.runs[r.Key()] = &r
		if r.Seq > b.seq {
			b.seq = r.Seq
		}
	}
	keys := make([]RunKey, 0, len(b.runs))
	for k := range b.runs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y RunKey) int { return newer(b.runs[x], b.runs[y]) })
	for _, k := range keys { // oldest first, so the newest wins
		r := b.runs[k]
		s := b.sessions[r.SessionID]
		if s == nil {
			s = &session{}
			b.sessions[r.SessionID] = s
		}
		s.current, s.hasCurrent = k, true
		if r.NativeSessionID != "" {
			s.nativeSessionID = r.NativeSessionID
		}
		if r.Last.OccurredAt.After(s.lastEventAt) {
			s.lastEventAt = r.Last.OccurredAt
		}
		s.surfaceID = r.SurfaceID
		b.surfaces[r.SurfaceID] = k
	}
	for i := range items {
		it := items[i]
		b.items[it.ID] = &it
		if it.ID >= b.nextItem {
			b.nextItem = it.ID + 1
		}
		if it.Open() {
			k := it.openKey()
			if b.open[k] == nil {
				b.open[k] = map[proto.EventKind]int64{}
			}
			b.open[k][it.Reason] = it.ID
		}
	}
}

// newer orders runs by their newest applied event, then arrival.
func newer(x, y *Run) int {
	if c := x.UpdatedAt.Compare(y.UpdatedAt); c != 0 {
		return c
	}
	return cmp.Compare(x.Seq, y.Seq)
}

// Run returns a copy of the run.
func (b *Board) Run(k RunKey) (Run, bool) {
	r, ok := b.runs[k]
	if !ok {
		return Run{}, false
	}
	return *r, true
}

// Unfinished returns every run that is not terminal, oldest first.
func (b *Board) Unfinished() []Run {
	var out []Run
	for _, r := range b.runs {
		if !Terminal(r.State) {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(x, y Run) int { return newer(&x, &y) })
	return out
}

// RunsOnSurface returns the non-terminal runs last reported on surface.
func (b *Board) RunsOnSurface(surface string) []Run {
	var out []Run
	for _, r := range b.runs {
		if r.SurfaceID == surface && !Terminal(r.State) {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(x, y Run) int { return newer(&x, &y) })
	return out
}

// View is the derived state of a session or surface at a moment.
type View struct {
	State           proto.RunState // derived; "" when no run is known
	Terminal        proto.RunState // under idle: the terminal state it follows
	Run             Run            // the current run (zero when none)
	HasRun          bool
	IdleAt          time.Time // when a terminal current run turns idle; zero otherwise
	OpenItems       int
	NativeSessionID string
	LastEventAt     time.Time
	SurfaceID       string
}

// Session returns the view of a Muster session at now.
func (b *Board) Session(id string, now time.Time) View {
	var v View
	// A session without runs may still have an open item: a notification.
	if s := b.sessions[id]; s != nil {
		v = View{NativeSessionID: s.nativeSessionID, LastEventAt: s.lastEventAt, SurfaceID: s.surfaceID}
		if s.hasCurrent {
			if r, ok := b.runs[s.current]; ok {
				b.fill(&v, r, s.lastEventAt, now)
			}
		}
	}
	for k, m := range b.open {
		if k.SessionID == id {
			v.OpenItems += len(m)
		}
	}
	return v
}

// Surface returns the view of a surface at now: its current run only.
func (b *Board) Surface(id string, now time.Time) View {
	k, ok := b.surfaces[id]
	if !ok {
		return View{}
	}
	r, ok := b.runs[k]
	if !ok {
		return View{}
	}
	v := View{SurfaceID: id, NativeSessionID: r.NativeSessionID, LastEventAt: r.Last.OccurredAt}
	b.fill(&v, r, r.Last.OccurredAt, now)
	v.OpenItems = len(b.open[k])
	return v
}

func (b *Board) fill(v *View, r *Run, lastEventAt, now time.Time) {
	v.Run, v.HasRun = *r, true
	v.State = r.State
	if Terminal(r.State) {
		quiet := r.EndedAt
		if lastEventAt.After(quiet) {
			quiet = lastEventAt
		}
		v.IdleAt = quiet.Add(b.rules.IdleAfter)
		v.Terminal = r.State
		if !now.Before(v.IdleAt) {
			v.State = proto.StateIdle
		}
	}
}

// Items returns the attention items at now, oldest first: open ones, and
// with all also those resolved within the last ResolvedTTL.
func (b *Board) Items(now time.Time, all bool) []Item {
	var out []Item
	for _, it := range b.items {
		if it.Open() || (all && now.Sub(it.ResolvedAt) < b.rules.ResolvedTTL) {
			out = append(out, *it)
		}
	}
	slices.SortFunc(out, func(x, y Item) int { return cmp.Compare(x.ID, y.ID) })
	return out
}

// Item returns one item by id.
func (b *Board) Item(id int64) (Item, bool) {
	it, ok := b.items[id]
	if !ok {
		return Item{}, false
	}
	return *it, true
}

// Result is what one event did.
type Result struct {
	Effect   Effect
	Prev     proto.RunState // the run's state before; "" for a new run
	Run      Run            // the run after
	Opened   []Item
	Resolved []Item
}

func (r Result) String() string {
	return fmt.Sprintf("%s %s→%s opened=%d resolved=%d", r.Effect, r.Prev, r.Run.State, len(r.Opened), len(r.Resolved))
}
