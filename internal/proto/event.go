package proto

import "time"

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
)

// EventResponse is the single JSON reply on events.sock.
type EventResponse struct {
	OK       bool   `json:"ok"`
	Inserted *bool  `json:"inserted,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Stable error codes of events.sock (DESIGN §4).
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
)
