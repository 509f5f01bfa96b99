package proto

import (
	"fmt"
	"time"
)

// EventSchemaVersion is the only envelope and event schema version defined.
const EventSchemaVersion = 1

// MaxEventRequest is the largest request events.sock accepts, newline included.
const MaxEventRequest = 64 << 10

// ReservedHookPrefix marks hook names the daemon synthesizes itself; clients
// that send one are refused with ErrReservedHookName.
const ReservedHookPrefix = "muster."

// RawID is the `{"rawValue": "..."}` wrapper the seed uses for identifiers.
type RawID struct {
	RawValue string `json:"rawValue"`
}

// Envelope is one request on events.sock.
type Envelope struct {
	SchemaVersion int    `json:"schemaVersion"`
	Capability    string `json:"capability"`
	Event         Event  `json:"event"`
}

// Event is one lifecycle report from a provider hook (or synthesized by the
// daemon, then with a HookName under ReservedHookPrefix).
type Event struct {
	SchemaVersion int       `json:"schemaVersion"`
	ID            RawID     `json:"id"`
	RunID         RawID     `json:"runID"`
	SessionID     *string   `json:"sessionID"`
	SurfaceID     RawID     `json:"surfaceID"`
	Provider      string    `json:"provider"`
	Kind          EventKind `json:"kind"`
	OccurredAt    time.Time `json:"occurredAt"`
	Message       string    `json:"message,omitempty"`
	HookName      string    `json:"hookName,omitempty"`
	// Model is Muster's addition to the seed's event: the model the hook
	// payload names, for the dashboard. It is not part of the run state
	// and not stored; a daemon that does not know it ignores it.
	Model string `json:"model,omitempty"`
}

// EventKind is the wire value of an event's kind.
type EventKind string

const (
	KindStarted           EventKind = "started"
	KindRunning           EventKind = "running"
	KindInputRequested    EventKind = "input-requested"
	KindApprovalRequested EventKind = "approval-requested"
	KindSucceeded         EventKind = "succeeded"
	KindFailed            EventKind = "failed"
	KindInterrupted       EventKind = "interrupted"
	KindDisconnected      EventKind = "disconnected"
)

// Valid reports whether k is one of the eight wire kinds.
func (k EventKind) Valid() bool {
	switch k {
	case KindStarted, KindRunning, KindInputRequested, KindApprovalRequested,
		KindSucceeded, KindFailed, KindInterrupted, KindDisconnected:
		return true
	}
	return false
}

// Terminal reports whether k ends its run.
func (k EventKind) Terminal() bool {
	switch k {
	case KindSucceeded, KindFailed, KindInterrupted, KindDisconnected:
		return true
	}
	return false
}

// RunState is what `muster ls` shows for a run, surface or session.
type RunState string

const (
	StateRunning         RunState = "running"
	StateWaitingInput    RunState = "waitingInput"
	StateWaitingApproval RunState = "waitingApproval"
	StateSucceeded       RunState = "succeeded"
	StateFailed          RunState = "failed"
	StateInterrupted     RunState = "interrupted"
	StateDisconnected    RunState = "disconnected"
	// StateIdle is derived: a run that has gone quiet after a terminal state.
	// It never appears on the wire.
	StateIdle RunState = "idle"
	// StateLimited is derived too: a run that failed because the agent
	// reached its provider's usage or rate limit (provider.LimitReader),
	// until the reset time it named passes or another run starts.
	StateLimited RunState = "limited"
)

// EventResponse is the single JSON reply on events.sock.
type EventResponse struct {
	OK       bool   `json:"ok"`
	Inserted *bool  `json:"inserted,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Stable error codes of events.sock: the nine of DESIGN §4, ErrRateLimited
// for a surface over its quota, and ErrForbidden for a sender inside
// another surface's pane (internal/events).
const (
	ErrInvalidJSON        = "invalid_json"
	ErrTooLarge           = "too_large"
	ErrUnsupportedVersion = "unsupported_version"
	ErrInvalidEvent       = "invalid_event"
	ErrUnknownKind        = "unknown_kind"
	ErrReservedHookName   = "reserved_hook_name"
	ErrUnauthorized       = "unauthorized"
	ErrStorageFailure     = "storage_failure"
	ErrTimeout            = "timeout"
	ErrRateLimited        = "rate_limited"
	ErrForbidden          = "forbidden"
)

// ParseTime parses an ISO 8601 date and time as events carry it:
// YYYY-MM-DD, then 'T' (or 't' or a space), hh:mm, optional :ss, an optional
// fraction of a second (after '.' or ','; up to nanoseconds), and an optional
// offset (Z, ±hh, ±hhmm or ±hh:mm). A time without an offset is UTC: the hook
// helper and the daemon run on the same host, and UTC is what every provider
// writes. The result is always in UTC.
func ParseTime(s string) (time.Time, error) {
	p := timeParser{s: s}
	year := p.digits(4)
	p.expect('-')
	month := p.digits(2)
	p.expect('-')
	day := p.digits(2)
	if p.ok() && p.i < len(s) && (s[p.i] == 'T' || s[p.i] == 't' || s[p.i] == ' ') {
		p.i++
	} else {
		p.fail()
	}
	hour := p.digits(2)
	p.expect(':')
	minute := p.digits(2)
	sec, nsec := 0, 0
	if p.ok() && p.i < len(s) && s[p.i] == ':' {
		p.i++
		sec = p.digits(2)
		if p.ok() && p.i < len(s) && (s[p.i] == '.' || s[p.i] == ',') {
			p.i++
			start := p.i
			for p.i < len(s) && s[p.i] >= '0' && s[p.i] <= '9' {
				if p.i-start < 9 {
					nsec = nsec*10 + int(s[p.i]-'0')
				}
				p.i++
			}
			n := p.i - start
			if n == 0 {
				p.fail()
			}
			for ; n < 9; n++ {
				nsec *= 10
			}
		}
	}
	offset := 0
	if p.ok() && p.i < len(s) {
		switch s[p.i] {
		case 'Z', 'z':
			p.i++
		case '+', '-':
			sign := 1
			if s[p.i] == '-' {
				sign = -1
			}
			p.i++
			oh := p.digits(2)
			om := 0
			if p.ok() && p.i < len(s) {
				if s[p.i] == ':' {
					p.i++
				}
				om = p.digits(2)
			}
			if oh > 23 || om > 59 {
				p.fail()
			}
			offset = sign * (oh*3600 + om*60)
		default:
			p.fail()
		}
	}
	if !p.ok() || p.i != len(s) {
		return time.Time{}, fmt.Errorf("parse time %q: not an ISO 8601 date and time", s)
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 60 {
		return time.Time{}, fmt.Errorf("parse time %q: field out of range", s)
	}
	if sec == 60 { // a leap second reads as the next instant
		sec = 59
		nsec = 999999999
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.FixedZone("", offset))
	if t.Day() != day {
		return time.Time{}, fmt.Errorf("parse time %q: day out of range", s)
	}
	if u := t.UTC(); u.Year() < 1 || u.Year() > 9999 {
		return time.Time{}, fmt.Errorf("parse time %q: year out of range", s)
	}
	return t.UTC(), nil
}

type timeParser struct {
	s   string
	i   int
	bad bool
}

func (p *timeParser) ok() bool { return !p.bad }
func (p *timeParser) fail()    { p.bad = true }

func (p *timeParser) digits(n int) int {
	if p.bad || p.i+n > len(p.s) {
		p.bad = true
		return 0
	}
	v := 0
	for _, c := range []byte(p.s[p.i : p.i+n]) {
		if c < '0' || c > '9' {
			p.bad = true
			return 0
		}
		v = v*10 + int(c-'0')
	}
	p.i += n
	return v
}

func (p *timeParser) expect(c byte) {
	if p.bad || p.i >= len(p.s) || p.s[p.i] != c {
		p.bad = true
		return
	}
	p.i++
}

// Wait groups: names accepted by WaitArgs.Until besides the run states.
const (
	// waiting: the agent needs you. It asks (waitingInput,
	// waitingApproval), or its turn is over and it is back at its prompt
	// (succeeded, failed, interrupted, idle).
	WaitGroupWaiting = "waiting"
	// done: the run is over (succeeded, failed, interrupted, disconnected,
	// idle), or the session's pane is: exited or restorable, which the
	// waiter checks besides the run states (WaitSession.Pane).
	WaitGroupDone      = "done"
	WaitGroupAttention = "attention" // the session has an open attention item
)

// ExpandWaitStates validates a list of run states and groups and returns
// the run states it covers, plus whether it asks for an open attention item.
func ExpandWaitStates(list []string) (states []RunState, attention bool, err error) {
	seen := map[RunState]bool{}
	add := func(ss ...RunState) {
		for _, s := range ss {
			if !seen[s] {
				seen[s] = true
				states = append(states, s)
			}
		}
	}
	for _, raw := range list {
		switch RunState(raw) {
		case StateRunning, StateWaitingInput, StateWaitingApproval, StateSucceeded, StateFailed,
			StateInterrupted, StateDisconnected, StateIdle:
			add(RunState(raw))
			continue
		}
		switch raw {
		case WaitGroupWaiting:
			add(StateWaitingInput, StateWaitingApproval, StateSucceeded, StateFailed, StateInterrupted, StateIdle)
		case WaitGroupDone:
			add(StateSucceeded, StateFailed, StateInterrupted, StateDisconnected, StateIdle)
		case WaitGroupAttention:
			attention = true
		default:
			return nil, false, fmt.Errorf("unknown state %q (want running, waitingInput, waitingApproval, succeeded, failed, interrupted, disconnected, idle, or the groups waiting, done, attention)", raw)
		}
	}
	if len(states) == 0 && !attention {
		return nil, false, fmt.Errorf("no state to wait for")
	}
	return states, attention, nil
}
