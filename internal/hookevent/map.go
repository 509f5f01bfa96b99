package hookevent

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// Provider names accepted by `muster hook event PROVIDER`; they are also the
// event's provider field.
const (
	Claude   = "claude"
	Codex    = "codex"
	Gemini   = "gemini"
	Cursor   = "cursor"
	OpenCode = "opencode"
)

// Providers lists the accepted provider names.
var Providers = []string{Claude, Codex, Gemini, Cursor, OpenCode}

// KnownProvider reports whether p is one of Providers.
func KnownProvider(p string) bool {
	switch p {
	case Claude, Codex, Gemini, Cursor, OpenCode:
		return true
	}
	return false
}

// NeedsJSONReply reports whether the provider parses the hook's stdout as
// JSON, so that the helper must print `{}` on every path.
func NeedsJSONReply(p string) bool { return p == Cursor || p == Gemini }

// ErrMalformed marks a payload the helper cannot read; it prints one warning
// and sends nothing.
var ErrMalformed = errors.New("malformed hook payload")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// Limits on what is copied from a payload into an event.
const (
	MaxPayload    = 1 << 20 // bytes read from stdin
	MaxMessage    = 300     // bytes of Event.Message
	maxIDLen      = 256     // session, turn and message ids
	maxHookName   = 64
	supersededMsg = "turn ended without a stop hook (interrupted, denied or abandoned)"
)

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

// Mapped is one event the helper sends, before the pane environment is added.
type Mapped struct {
	ID         string
	RunID      string
	SessionID  string // provider-native; "" = null
	Kind       proto.EventKind
	OccurredAt time.Time
	Message    string
	HookName   string
}

// Result is the outcome of mapping one payload.
type Result struct {
	Provider string
	Hook     string   // the provider's hook or event name
	Session  string   // provider-native session id, "" if the payload has none
	Events   []Mapped // zero (ignored), one, or two (a superseded turn closed first)
	Ignored  string   // why nothing is sent, for MUSTER_HOOK_DEBUG
	State    *State   // the state to store; nil = leave unchanged
	Drop     bool     // delete the session's state (the session ended)
}

// action is what a hook means for the run, before state rules apply.
type action int

const (
	actIgnore action = iota
	actTurnStart
	actRunning
	actBusy // OpenCode session.status busy: running, or the start of a turn when none is open
	actApproval
	actApprovalEcho // Claude's late Notification(permission_prompt) for an approval already reported
	actInput
	actSucceeded
	actFailed
	actInterrupted
	actSessionEnd
	actChildSession // OpenCode: a sub-agent session was created
)

// intent is a provider mapper's reading of one payload.
type intent struct {
	hook     string
	session  string
	act      action
	why      string    // reason when act == actIgnore
	turnKey  string    // provider turn identifier, "" when the payload has none
	prompt   string    // the prompt, when the payload has it (fallback turn key)
	stamp    string    // the payload's own timestamp, if any (fallback turn key)
	at       time.Time // the payload's own time, zero = now
	message  string
	subagent bool // the payload comes from a sub-agent of the session
}

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
	var (
		in  intent
		err error
	)
	switch provider {
	case Claude:
		in, err = claudeIntent(payload)
	case Codex:
		in, err = codexIntent(payload)
	case Gemini:
		in, err = geminiIntent(payload)
	case Cursor:
		in, err = cursorIntent(payload)
	case OpenCode:
		in, err = opencodeIntent(payload)
	default:
		return intent{}, fmt.Errorf("unknown provider %q (want one of %s)", provider, strings.Join(Providers, ", "))
	}
	if err != nil {
		return intent{}, err
	}
	if err := checkIntent(&in); err != nil {
		return intent{}, err
	}
	return in, nil
}

func checkIntent(in *intent) error {
	if in.hook == "" {
		return malformed("no hook event name")
	}
	if len(in.hook) > maxHookName || !printableID(in.hook) {
		return malformed("implausible hook event name")
	}
	if strings.HasPrefix(in.hook, proto.ReservedHookPrefix) {
		return malformed("hook event name %q is reserved", in.hook)
	}
	if len(in.session) > maxIDLen || !printableID(in.session) {
		return malformed("implausible session id")
	}
	if len(in.turnKey) > 4*maxIDLen || !printableID(in.turnKey) {
		return malformed("implausible turn id")
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
	res := Result{Provider: provider, Hook: in.hook, Session: in.session}
	at := in.at
	if at.IsZero() {
		at = now
	}
	at = at.UTC()
	// cur is the state of this session, nil when there is none to consult.
	var cur *State
	if st != nil && in.session != "" {
		if st.Session == in.session {
			c := *st
			cur = &c
		} else {
			cur = &State{Session: in.session}
		}
	}
	msg := cleanMessage(in.message)
	emit := func(run string, kind proto.EventKind) {
		res.Events = append(res.Events, Mapped{
			ID:         eventID(run, in.hook, string(kind), payload),
			RunID:      run,
			SessionID:  in.session,
			Kind:       kind,
			OccurredAt: at,
			Message:    msg,
			HookName:   in.hook,
		})
	}
	ignore := func(why string) Result {
		res.Ignored = why
		res.Events = nil
		return res
	}
	if cur != nil && cur.Child && in.act != actSessionEnd {
		return ignore("sub-agent session")
	}
	// run resolves the run a mid-turn hook belongs to.
	run := func() string {
		if in.turnKey != "" {
			return TurnRunID(provider, in.turnKey)
		}
		if cur != nil && cur.Run != "" {
			return cur.Run
		}
		if in.prompt != "" {
			return TurnRunID(provider, in.session+"\x00prompt\x00"+in.prompt)
		}
		return TurnRunID(provider, in.session+"\x00session")
	}
	same := func(r string) bool { return cur != nil && cur.Run == r }

	switch in.act {
	case actIgnore:
		return ignore(in.why)

	case actChildSession:
		if cur == nil {
			return ignore("sub-agent session")
		}
		res.State = &State{Session: in.session, Child: true}
		return ignore("sub-agent session")

	case actSessionEnd:
		res.Drop = cur != nil
		if cur == nil || !cur.Open || cur.Run == "" {
			return ignore("session ended with no open run")
		}
		if msg == "" {
			msg = "session ended"
		}
		emit(cur.Run, proto.KindInterrupted)
		return res

	case actTurnStart:
		var newRun string
		switch {
		case in.turnKey != "":
			newRun = TurnRunID(provider, in.turnKey)
		case cur != nil:
			// No turn id: the payload's own time (or ours) keeps two equal
			// prompts of one session apart; later hooks read the run back
			// from the state.
			stamp := in.stamp
			if stamp == "" {
				stamp = now.UTC().Format(time.RFC3339Nano)
			}
			newRun = TurnRunID(provider, in.session+"\x00turn\x00"+stamp+"\x00"+in.prompt)
		default:
			newRun = TurnRunID(provider, in.session+"\x00prompt\x00"+in.prompt)
		}
		if same(newRun) {
			return ignore("turn already started")
		}
		if cur != nil && slices.Contains(cur.Recent, newRun) {
			// OpenCode re-sends a user message's update after its turn ended.
			return ignore("turn already seen")
		}
		if cur != nil && cur.Open && cur.Run != "" {
			// The previous turn ended without a terminal hook: Esc, a denied
			// permission, or a crash of the turn. Close it first.
			res.Events = append(res.Events, Mapped{
				ID:         supersededEventID(cur.Run),
				RunID:      cur.Run,
				SessionID:  in.session,
				Kind:       proto.KindInterrupted,
				OccurredAt: at,
				Message:    supersededMsg,
				HookName:   in.hook,
			})
		}
		emit(newRun, proto.KindStarted)
		if cur != nil {
			recent := cur.Recent
			if cur.Run != "" {
				recent = append(slices.Clone(recent), cur.Run)
				if len(recent) > maxRecent {
					recent = recent[len(recent)-maxRecent:]
				}
			}
			res.State = &State{Session: in.session, Run: newRun, Open: true, Last: proto.KindStarted, Recent: recent}
		}
		return res

	case actBusy:
		if cur != nil && (!cur.Open || cur.Run == "") {
			// OpenCode names no turn when it gets busy; with no turn open
			// this is a new prompt (the plugin may not forward the user
			// message), keyed by the time it was seen.
			in.act = actTurnStart
			return apply(provider, in, payload, st, now)
		}
		in.act = actRunning
		return apply(provider, in, payload, st, now)

	case actRunning:
		r := run()
		if in.subagent && !(same(r) && cur.Approval) {
			return ignore("sub-agent event")
		}
		if same(r) {
			if !cur.Open {
				return ignore("run already ended")
			}
			if cur.Last == proto.KindStarted || cur.Last == proto.KindRunning {
				return ignore("run already running")
			}
		}
		emit(r, proto.KindRunning)
		if same(r) {
			cur.Last, cur.Approval = proto.KindRunning, false
			res.State = cur
		}
		return res

	case actApproval, actApprovalEcho:
		r := run()
		if same(r) {
			if !cur.Open {
				return ignore("run already ended")
			}
			if in.act == actApprovalEcho && cur.ApprovalSeen {
				return ignore("approval already reported by PermissionRequest")
			}
		}
		emit(r, proto.KindApprovalRequested)
		if same(r) {
			cur.Last, cur.Approval = proto.KindApprovalRequested, true
			if in.act == actApproval {
				cur.ApprovalSeen = true
			}
			res.State = cur
		}
		return res

	case actInput:
		r := run()
		if in.subagent {
			return ignore("sub-agent event")
		}
		if same(r) && !cur.Open {
			return ignore("run already ended")
		}
		emit(r, proto.KindInputRequested)
		if same(r) {
			cur.Last = proto.KindInputRequested
			res.State = cur
		}
		return res

	case actSucceeded, actFailed, actInterrupted:
		if in.subagent {
			return ignore("sub-agent event")
		}
		kind := map[action]proto.EventKind{
			actSucceeded:   proto.KindSucceeded,
			actFailed:      proto.KindFailed,
			actInterrupted: proto.KindInterrupted,
		}[in.act]
		r := run()
		if same(r) && !cur.Open {
			return ignore("run already ended")
		}
		if in.turnKey == "" && (cur == nil || cur.Run == "") && provider == OpenCode {
			// OpenCode's session.idle/error name no turn; without a known
			// turn they are the echo of one we never saw start.
			return ignore("no turn in progress")
		}
		emit(r, kind)
		if same(r) {
			cur.Open, cur.Last, cur.Approval = false, kind, false
			res.State = cur
		}
		return res
	}
	return ignore("unmapped")
}
