package hookevent

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all/hooks"
	"github.com/musterhq/muster/internal/provider/hookmap"
)

// Providers lists the providers whose hooks the helper maps: the argument
// of `muster hook event PROVIDER` and the event's provider field.
func Providers() []string { return hooks.Names() }

// KnownProvider reports whether p is one of Providers.
func KnownProvider(p string) bool {
	_, ok := hooks.Lookup(p)
	return ok
}

// NeedsJSONReply reports whether the provider parses the hook's stdout as
// JSON, so that the helper must print `{}` on every path.
func NeedsJSONReply(p string) bool {
	m, ok := hooks.Lookup(p)
	return ok && m.JSONReply
}

// routedBySession reports whether the provider's events are sent even
// without a pane environment, for the daemon to route by session id.
func routedBySession(p string) bool {
	m, ok := hooks.Lookup(p)
	return ok && m.RoutedBySession
}

// ErrMalformed marks a payload the helper cannot read; it prints one warning
// and sends nothing.
var ErrMalformed = hookmap.ErrMalformed

func malformed(format string, args ...any) error { return hookmap.Malformed(format, args...) }

// MaxMessage bounds Event.Message; the limit is proto's, named here for
// the daemon's own events (internal/native), which keep to it too.
const MaxMessage = proto.MaxEventMessage

const supersededMsg = "turn ended without a stop hook (interrupted, denied or abandoned)"

// State is what the helper remembers about one provider session between
// invocations (one small file per session under the runtime dir, see
// StateStore). It exists because some hooks of a turn carry no turn
// identifier (Gemini, OpenCode, SessionEnd everywhere) and because a few
// duplicate signals are only recognisable with memory of the turn.
type State struct {
	Session      string          `json:"session"`
	Run          string          `json:"run,omitempty"`          // run id of the current turn
	Open         bool            `json:"open,omitempty"`         // no terminal event sent for Run yet
	Last         proto.EventKind `json:"last,omitempty"`         // last kind sent for Run
	Approval     bool            `json:"approval,omitempty"`     // an approval request of Run is pending
	ApprovalSeen bool            `json:"approvalSeen,omitempty"` // Run had a PermissionRequest-style approval
	Child        bool            `json:"child,omitempty"`        // a sub-agent session (OpenCode)
	Recent       []string        `json:"recent,omitempty"`       // earlier runs of the session, newest last
}

// maxRecent bounds State.Recent.
const maxRecent = 8

// Result is the outcome of mapping one payload.
type Result struct {
	Provider string
	Hook     string // the provider's hook or event name
	Session  string // provider-native session id, "" if the payload has none
	// Events are zero (ignored), one, or two (a superseded turn closed
	// first), without the pane's surface (Envelope adds it).
	Events  []proto.Event
	Ignored string // why nothing is sent, for MUSTER_HOOK_DEBUG
	State   *State // the state to store; nil = leave unchanged
	Drop    bool   // delete the session's state (the session ended)
}

// intent is a provider mapping's reading of one payload.
type intent = hookmap.Intent

// Map turns one native hook payload into the events to send. st is the
// session's remembered state (any session: a state of another session reads
// as empty), or nil when no state can be kept; then every mapped event is
// sent and turns without identifiers fall back to the session and prompt.
// Map does no I/O; a payload it cannot read yields an error wrapping
// ErrMalformed.
func Map(provider string, payload []byte, st *State, now time.Time) (Result, error) {
	in, err := parse(provider, payload)
	if err != nil {
		return Result{Provider: provider}, err
	}
	return apply(provider, in, payload, st, now), nil
}

// parse reads a payload into the provider-independent intent.
func parse(provider string, payload []byte) (intent, error) {
	m, ok := hooks.Lookup(provider)
	if !ok {
		return intent{}, fmt.Errorf("unknown provider %q (want one of %s)", provider, strings.Join(Providers(), ", "))
	}
	in, err := m.Map(payload)
	if err != nil {
		return intent{}, err
	}
	if err := checkIntent(&in); err != nil {
		return intent{}, err
	}
	return in, nil
}

func checkIntent(in *intent) error {
	if in.Hook == "" {
		return malformed("no hook event name")
	}
	if !proto.ValidHookName(in.Hook) || !printableID(in.Hook) {
		return malformed("implausible hook event name")
	}
	if proto.ReservedHookName(in.Hook) {
		return malformed("hook event name %q is reserved", in.Hook)
	}
	if in.Session != "" && (!proto.ValidID(in.Session) || !printableID(in.Session)) {
		return malformed("implausible session id")
	}
	// The turn id never travels: it is hashed into the run id.
	if len(in.TurnKey) > 4*proto.MaxIDLen || !printableID(in.TurnKey) {
		return malformed("implausible turn id")
	}
	if in.Model != "" && !proto.ValidModel(in.Model) {
		in.Model = "" // no model name; the event matters more
	}
	return nil
}

// printableID reports whether s is free of control characters and spaces
// other than inside (ids never have them; hook names never have them).
func printableID(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfffd {
			return false
		}
	}
	return true
}

// apply runs the state rules shared by every provider.
func apply(provider string, in intent, payload []byte, st *State, now time.Time) Result {
	a := applier{provider: provider, in: in, payload: payload, now: now}
	a.res = Result{Provider: provider, Hook: in.Hook, Session: in.Session}
	// The payload's own time, unless it is implausible: the daemon refuses
	// times before 2000 and in the future.
	a.at = in.At
	if a.at.IsZero() || a.at.Year() < 2000 || a.at.After(now) {
		a.at = now
	}
	a.at = a.at.UTC()
	a.msg = cleanMessage(in.Message)
	if st != nil && in.Session != "" {
		// cur is a copy: Map never changes the caller's state.
		if st.Session == in.Session {
			c := *st
			a.cur = &c
		} else {
			a.cur = &State{Session: in.Session}
		}
	}
	return a.apply()
}

// applier holds one application of the state rules.
type applier struct {
	provider string
	in       intent
	payload  []byte
	now, at  time.Time
	msg      string
	cur      *State // the session's state; nil when none can be kept
	res      Result
}

func (a *applier) ignore(why string) Result {
	a.res.Ignored = why
	a.res.Events = nil
	a.res.State = nil
	return a.res
}

func (a *applier) add(id, run string, kind proto.EventKind, msg string) {
	var session *string
	if a.in.Session != "" {
		s := a.in.Session
		session = &s
	}
	a.res.Events = append(a.res.Events, proto.Event{
		SchemaVersion: proto.EventSchemaVersion,
		ID:            proto.RawID{RawValue: id},
		RunID:         proto.RawID{RawValue: run},
		SessionID:     session,
		Provider:      a.provider,
		Kind:          kind,
		OccurredAt:    a.at,
		Message:       msg,
		HookName:      a.in.Hook,
		Model:         a.in.Model,
	})
}

// emit adds the event the hook itself stands for.
func (a *applier) emit(run string, kind proto.EventKind) {
	a.add(eventID(run, a.in.Hook, string(kind), a.payload), run, kind, a.msg)
}

// same reports whether run is the session's current run.
func (a *applier) same(run string) bool { return a.cur != nil && a.cur.Run == run }

// run resolves the run a mid-turn hook belongs to.
func (a *applier) run() string {
	switch {
	case a.in.TurnKey != "":
		return TurnRunID(a.provider, a.in.TurnKey)
	case a.cur != nil && a.cur.Run != "":
		return a.cur.Run
	case a.in.Prompt != "":
		return TurnRunID(a.provider, a.in.Session+"\x00prompt\x00"+a.in.Prompt)
	}
	return TurnRunID(a.provider, a.in.Session+"\x00session")
}

// startTurn makes run the session's current run: it closes a previous turn
// left open (Esc, a denied permission: no terminal hook fires) as
// interrupted, then emits started. startedID is the id of the started event.
func (a *applier) startTurn(run, startedID, startedMsg string) {
	if a.cur != nil && a.cur.Open && a.cur.Run != "" {
		a.add(supersededEventID(a.cur.Run), a.cur.Run, proto.KindInterrupted, supersededMsg)
	}
	a.add(startedID, run, proto.KindStarted, startedMsg)
	if a.cur != nil {
		recent := a.cur.Recent
		if a.cur.Run != "" {
			recent = append(slices.Clone(recent), a.cur.Run)
			if len(recent) > maxRecent {
				recent = recent[len(recent)-maxRecent:]
			}
		}
		a.cur = &State{Session: a.in.Session, Run: run, Open: true, Last: proto.KindStarted, Recent: recent}
		a.res.State = a.cur
	}
}

func (a *applier) apply() Result {
	in, cur := a.in, a.cur
	if cur != nil && cur.Child && in.Act != hookmap.SessionEnd {
		return a.ignore("sub-agent session")
	}
	switch in.Act {
	case hookmap.Ignore:
		return a.ignore(in.Why)

	case hookmap.ChildSession:
		res := a.ignore("sub-agent session")
		if cur != nil {
			res.State = &State{Session: in.Session, Child: true}
		}
		return res

	case hookmap.SessionEnd:
		a.res.Drop = cur != nil
		if cur == nil || !cur.Open || cur.Run == "" {
			return a.ignore("session ended with no open run")
		}
		if a.msg == "" {
			a.msg = "session ended"
		}
		a.emit(cur.Run, proto.KindInterrupted)
		return a.res

	case hookmap.Busy:
		if cur != nil && (!cur.Open || cur.Run == "") {
			// OpenCode names no turn when it gets busy; with no turn open
			// this is a new prompt (the plugin may not forward the user
			// message), keyed by the time it was seen.
			a.in.Act = hookmap.TurnStart
		} else {
			a.in.Act = hookmap.Running
		}
		return a.apply()

	case hookmap.TurnStart:
		var run string
		switch {
		case in.TurnKey != "":
			run = TurnRunID(a.provider, in.TurnKey)
		case cur != nil:
			// No turn id: the payload's own time (or ours) keeps two equal
			// prompts of one session apart; later hooks read the run back
			// from the state.
			stamp := in.Stamp
			if stamp == "" {
				stamp = a.now.UTC().Format(time.RFC3339Nano)
			}
			run = TurnRunID(a.provider, in.Session+"\x00turn\x00"+stamp+"\x00"+in.Prompt)
		default:
			run = TurnRunID(a.provider, in.Session+"\x00prompt\x00"+in.Prompt)
		}
		if a.same(run) {
			return a.ignore("turn already started")
		}
		if cur != nil && slices.Contains(cur.Recent, run) {
			// OpenCode re-sends a user message's update after its turn ended.
			return a.ignore("turn already seen")
		}
		a.startTurn(run, eventID(run, in.Hook, string(proto.KindStarted), a.payload), a.msg)
		return a.res
	}

	// Everything else happens within a run.
	r := a.run()
	if in.Subagent && !(in.Act == hookmap.Running && a.same(r) && cur.Approval) {
		return a.ignore("sub-agent event")
	}
	if in.TurnKey == "" && (cur == nil || cur.Run == "") && in.RequiresTurn &&
		in.Act != hookmap.Approval && in.Act != hookmap.Input {
		// OpenCode's session.idle/error name no turn; without a known
		// turn they are the echo of one we never saw start.
		return a.ignore("no turn in progress")
	}
	if in.TurnKey != "" && cur != nil && !a.same(r) {
		if slices.Contains(cur.Recent, r) {
			return a.ignore("event of an earlier turn")
		}
		// A turn whose start we never saw (the hooks were installed, or
		// the state lost, mid-turn): start it, so that started comes first.
		a.startTurn(r, nameUUID("implicit-start\x00"+r), "")
		cur = a.cur
	}
	if a.same(r) && !cur.Open {
		return a.ignore("run already ended")
	}
	var kind proto.EventKind
	switch in.Act {
	case hookmap.Running:
		if a.same(r) && (cur.Last == proto.KindStarted || cur.Last == proto.KindRunning) && len(a.res.Events) == 0 {
			return a.ignore("run already running")
		}
		if a.same(r) && (cur.Last == proto.KindStarted || cur.Last == proto.KindRunning) {
			return a.res // the implicit start says it all
		}
		kind = proto.KindRunning
	case hookmap.Approval, hookmap.ApprovalEcho:
		if in.Act == hookmap.ApprovalEcho && a.same(r) && (cur.ApprovalSeen || cur.Last == proto.KindInputRequested) {
			// The dialog was reported already, as an approval or (a
			// question tool's) as an input request.
			return a.ignore("approval already reported by PermissionRequest")
		}
		kind = proto.KindApprovalRequested
	case hookmap.Input:
		kind = proto.KindInputRequested
	case hookmap.Succeeded:
		kind = proto.KindSucceeded
	case hookmap.Failed:
		kind = proto.KindFailed
	case hookmap.Interrupted:
		kind = proto.KindInterrupted
	default:
		return a.ignore("unmapped")
	}
	a.emit(r, kind)
	if a.same(r) {
		cur.Last = kind
		switch kind {
		case proto.KindRunning:
			cur.Approval = false
		case proto.KindApprovalRequested:
			cur.Approval = true
			if in.Act == hookmap.Approval {
				cur.ApprovalSeen = true
			}
		case proto.KindSucceeded, proto.KindFailed, proto.KindInterrupted:
			cur.Open, cur.Approval = false, false
		}
		a.res.State = cur
	}
	return a.res
}
