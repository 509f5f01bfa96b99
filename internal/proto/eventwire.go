package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// The events.sock wire: the one encoder (the hook helper's, EncodeEnvelope)
// and the one decoder (the daemon's, DecodeEnvelope) of the event envelope
// and of its reply, and every limit on them. Both sides check an event with
// the same rules, so the helper never sends what the daemon would refuse
// (but a time the daemon finds in its future).

// Limits of events.sock and of the hook payloads behind it.
const (
	// MaxEventResponse bounds the one reply line the helper reads back.
	MaxEventResponse = 4 << 10
	// MaxHookPayload bounds what the helper reads of a hook's stdin. A
	// larger payload keeps its event: its largest string fields are cut
	// (internal/hookevent) until it fits.
	MaxHookPayload = 1 << 20
	// MaxHookPayloadRead bounds what the helper reads of a hook's stdin
	// before it gives up on the payload (and drains the rest).
	MaxHookPayloadRead = 32 << 20
	// MaxEventMessage bounds the message the helper puts in an event (the
	// daemon keeps a longer one that a hand-written client sends).
	MaxEventMessage = 300
	// MaxIDLen bounds the identifiers: id, runID, surfaceID, sessionID.
	MaxIDLen = 256
	// MaxHookNameLen bounds hookName.
	MaxHookNameLen = 128
	// MaxModelLen bounds model: a longer one is no model name.
	MaxModelLen = 128
)

// OldestEvent is the earliest occurredAt accepted.
var OldestEvent = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// ValidProvider reports whether p can be an event's provider field:
// [a-z0-9][a-z0-9._-]{0,31}. (Not a regexp: muster-hook links this
// package, and regexp would add to every hook's start.)
func ValidProvider(p string) bool {
	if p == "" || len(p) > 32 {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// ValidID reports whether s can be an identifier (id, runID, surfaceID,
// sessionID): non-empty, at most MaxIDLen bytes of UTF-8, no control
// character (HasControl), no leading or trailing space.
func ValidID(s string) bool {
	return s != "" && len(s) <= MaxIDLen && utf8.ValidString(s) && !HasControl(s) && strings.TrimSpace(s) == s
}

// ValidHookName reports whether h can be a hookName: at most
// MaxHookNameLen bytes of UTF-8 without a control character. The reserved
// prefix is checked apart (ReservedHookName), for its own error code.
func ValidHookName(h string) bool {
	return len(h) <= MaxHookNameLen && utf8.ValidString(h) && !HasControl(h)
}

// ValidModel reports whether m can be a model name: non-empty, at most
// MaxModelLen bytes of UTF-8, no control character. It reaches `ls` and the
// dashboard.
func ValidModel(m string) bool {
	return m != "" && len(m) <= MaxModelLen && utf8.ValidString(m) && !HasControl(m)
}

// ReservedHookName reports whether a hook name is one only the daemon may
// use (ReservedHookPrefix, in any letter case).
func ReservedHookName(h string) bool {
	p := ReservedHookPrefix
	return len(h) >= len(p) && strings.EqualFold(h[:len(p)], p)
}

// HasControl reports whether s holds a C0 or C1 control, DEL, a bidi
// embedding, override or isolate control, or a line or paragraph
// separator: anything that changes how the text around it is shown.
func HasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x2028 || r == 0x2029 {
			return true
		}
	}
	return false
}

// wireEnvelope and wireEvent are the JSON of an events.sock request, in
// both directions: pointers tell an absent field from an empty one.
type wireEnvelope struct {
	SchemaVersion json.RawMessage `json:"schemaVersion"`
	Capability    *string         `json:"capability"`
	Event         *wireEvent      `json:"event"`
}

type wireEvent struct {
	SchemaVersion json.RawMessage `json:"schemaVersion"`
	ID            *wireID         `json:"id"`
	RunID         *wireID         `json:"runID"`
	SessionID     *string         `json:"sessionID"`
	// A Codex hook outside a pane has no surface; the field is left out
	// rather than sent empty.
	SurfaceID  *wireID `json:"surfaceID,omitempty"`
	Provider   *string `json:"provider"`
	Kind       *string `json:"kind"`
	OccurredAt *string `json:"occurredAt"`
	Message    *string `json:"message,omitempty"`
	HookName   *string `json:"hookName,omitempty"`
	Model      *string `json:"model,omitempty"`
}

type wireID struct {
	RawValue *string `json:"rawValue"`
}

var schemaVersion1 = json.RawMessage(`1`)

// EncodeEnvelope encodes env as one events.sock request line, newline
// included. It refuses, with the error code the daemon would answer, an
// envelope the daemon would refuse (but for the time skew, which is the
// daemon's clock to judge) and one over MaxEventRequest.
func EncodeEnvelope(env Envelope) ([]byte, error) {
	e := &env.Event
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	at := e.OccurredAt.UTC().Format(time.RFC3339Nano)
	kind := string(e.Kind)
	w := wireEnvelope{
		SchemaVersion: schemaVersion1,
		Capability:    &env.Capability,
		Event: &wireEvent{
			SchemaVersion: schemaVersion1,
			ID:            &wireID{&e.ID.RawValue},
			RunID:         &wireID{&e.RunID.RawValue},
			SessionID:     e.SessionID,
			Provider:      &e.Provider,
			Kind:          &kind,
			OccurredAt:    &at,
			Message:       str(e.Message),
			HookName:      str(e.HookName),
			Model:         str(e.Model),
		},
	}
	if e.SurfaceID.RawValue != "" {
		w.Event.SurfaceID = &wireID{&e.SurfaceID.RawValue}
	}
	if env.SchemaVersion != EventSchemaVersion || e.SchemaVersion != EventSchemaVersion {
		return nil, fmt.Errorf("encode event: %s: schema version %d/%d", ErrUnsupportedVersion, env.SchemaVersion, e.SchemaVersion)
	}
	if _, code := validate(&w, false, e.OccurredAt, 0); code != "" {
		return nil, fmt.Errorf("encode event: the daemon would refuse it: %s", code)
	}
	// Messages quote code: <, > and & stay as they are rather than grow
	// six times into \u escapes.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("encode event: %w", err)
	}
	body := buf.Bytes()
	if len(body) > MaxEventRequest {
		return nil, fmt.Errorf("encode event: %s: %d bytes exceed the %d-byte limit", ErrTooLarge, len(body), MaxEventRequest)
	}
	return body, nil
}

// DecodeEnvelope parses and validates one request line (without its
// newline). It returns the stable error code of DESIGN §4 on failure,
// checked in this order: invalid_json (not UTF-8, not a JSON object,
// trailing bytes), unsupported_version (an envelope or event schemaVersion
// other than the number 1), invalid_event (wrong types, missing or
// malformed fields, dates in the future beyond maxSkew or before
// OldestEvent), unknown_kind, and reserved_hook_name. Authorization is the
// caller's.
//
// Unknown fields are ignored. sessionID may be null or absent (native
// events carry none); message, hookName and model may be absent.
//
// Identifiers (id, runID, surfaceID, sessionID), hookName and model are
// names, so control characters, bidi overrides and line separators in
// them are refused. message is free text that seed 004 does not
// constrain: it is kept as sent, newlines and even escape sequences
// included, because refusing it would lose the state change (an approval
// request nobody sees); everything that prints it to a terminal strips it
// (termtext).
//
// Decoding is encoding/json's: like it, a key matches its field in any
// letter case, and of two keys for one field the last wins. (A purpose-built
// scanner saved about 4 µs of CPU per request; a hook's process start costs
// thousands of times that.)
func DecodeEnvelope(line []byte, now time.Time, maxSkew time.Duration) (Envelope, string) {
	if !utf8.Valid(line) {
		return Envelope{}, ErrInvalidJSON
	}
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Envelope{}, ErrInvalidJSON
	}
	var w wireEnvelope
	err := json.Unmarshal(line, &w)
	var typeErr *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &typeErr) {
		return Envelope{}, ErrInvalidJSON
	}
	return validate(&w, typeErr != nil, now, maxSkew)
}

// validate checks a parsed envelope; typeErr says a field had the wrong
// JSON type.
func validate(w *wireEnvelope, typeErr bool, now time.Time, maxSkew time.Duration) (Envelope, string) {
	if code := checkVersion(w.SchemaVersion); code != "" {
		return Envelope{}, code
	}
	if w.Event != nil {
		if code := checkVersion(w.Event.SchemaVersion); code != "" {
			return Envelope{}, code
		}
	}
	if typeErr || w.Event == nil {
		return Envelope{}, ErrInvalidEvent
	}
	e := w.Event
	env := Envelope{SchemaVersion: EventSchemaVersion}
	if w.Capability != nil {
		env.Capability = *w.Capability
	}
	ev := &env.Event
	ev.SchemaVersion = EventSchemaVersion
	var ok bool
	if ev.ID.RawValue, ok = ident(e.ID); !ok {
		return Envelope{}, ErrInvalidEvent
	}
	if ev.RunID.RawValue, ok = ident(e.RunID); !ok {
		return Envelope{}, ErrInvalidEvent
	}
	if e.SurfaceID != nil && e.SurfaceID.RawValue != nil && *e.SurfaceID.RawValue != "" {
		// Required for every provider but Codex, which is checked by
		// authorization (absent or empty: unauthorized). A surface id
		// that is present must be well formed.
		if ev.SurfaceID.RawValue, ok = ident(e.SurfaceID); !ok {
			return Envelope{}, ErrInvalidEvent
		}
	}
	if e.SessionID != nil {
		if !ValidID(*e.SessionID) {
			return Envelope{}, ErrInvalidEvent
		}
		s := *e.SessionID
		ev.SessionID = &s
	}
	if e.Provider == nil || !ValidProvider(*e.Provider) {
		return Envelope{}, ErrInvalidEvent
	}
	ev.Provider = *e.Provider
	if e.OccurredAt == nil {
		return Envelope{}, ErrInvalidEvent
	}
	at, err := ParseTime(*e.OccurredAt)
	if err != nil || at.Before(OldestEvent) || at.After(now.Add(maxSkew)) {
		return Envelope{}, ErrInvalidEvent
	}
	ev.OccurredAt = at
	if e.Message != nil {
		ev.Message = *e.Message
	}
	if e.HookName != nil {
		if !ValidHookName(*e.HookName) {
			return Envelope{}, ErrInvalidEvent
		}
		ev.HookName = *e.HookName
	}
	if e.Model != nil && *e.Model != "" {
		if !ValidModel(*e.Model) {
			return Envelope{}, ErrInvalidEvent
		}
		ev.Model = *e.Model
	}
	if e.Kind == nil || *e.Kind == "" {
		return Envelope{}, ErrInvalidEvent
	}
	ev.Kind = EventKind(*e.Kind)
	if !ev.Kind.Valid() {
		return Envelope{}, ErrUnknownKind
	}
	if ReservedHookName(ev.HookName) {
		return Envelope{}, ErrReservedHookName
	}
	return env, ""
}

func checkVersion(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ErrInvalidEvent
	}
	if string(raw) == "1" {
		return ""
	}
	var v float64
	if json.Unmarshal(raw, &v) != nil || v != EventSchemaVersion {
		return ErrUnsupportedVersion
	}
	return ""
}

func ident(id *wireID) (string, bool) {
	if id == nil || id.RawValue == nil || !ValidID(*id.RawValue) {
		return "", false
	}
	return *id.RawValue, true
}

// EventErrorCodes lists every code an events.sock reply may carry.
var EventErrorCodes = []string{ErrInvalidJSON, ErrTooLarge, ErrUnsupportedVersion,
	ErrInvalidEvent, ErrUnknownKind, ErrReservedHookName, ErrUnauthorized,
	ErrStorageFailure, ErrTimeout, ErrRateLimited, ErrForbidden}

// EncodeEventResponse encodes the reply to one request, newline included.
// A reply never carries anything from the request.
func EncodeEventResponse(r EventResponse) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // a bool, a *bool and a string always encode
	}
	return append(b, '\n')
}

// DecodeEventResponse parses one reply line (without its newline).
func DecodeEventResponse(line []byte) (EventResponse, error) {
	if len(line) > MaxEventResponse {
		return EventResponse{}, fmt.Errorf("event response longer than %d bytes", MaxEventResponse)
	}
	var r EventResponse
	if err := json.Unmarshal(line, &r); err != nil {
		return EventResponse{}, fmt.Errorf("event response: %w", err)
	}
	if !r.OK && r.Error == "" {
		return EventResponse{}, fmt.Errorf("event response: neither ok nor an error: %q", line)
	}
	return r, nil
}
