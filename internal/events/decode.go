package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/musterhq/muster/internal/proto"
)

// Request is a decoded, validated events.sock request.
type Request struct {
	Capability string
	Event      proto.Event
}

type wireID struct {
	RawValue *string `json:"rawValue"`
}

type wireEvent struct {
	SchemaVersion json.RawMessage `json:"schemaVersion"`
	ID            *wireID         `json:"id"`
	RunID         *wireID         `json:"runID"`
	SessionID     *string         `json:"sessionID"`
	SurfaceID     *wireID         `json:"surfaceID"`
	Provider      *string         `json:"provider"`
	Kind          *string         `json:"kind"`
	OccurredAt    *string         `json:"occurredAt"`
	Message       *string         `json:"message"`
	HookName      *string         `json:"hookName"`
}

type wireEnvelope struct {
	SchemaVersion json.RawMessage `json:"schemaVersion"`
	Capability    *string         `json:"capability"`
	Event         *wireEvent      `json:"event"`
}

// Limits on identifiers; the whole request is bounded by MaxEventRequest.
const (
	maxIDLen       = 256
	maxHookNameLen = 128
	// oldest is the earliest occurredAt accepted.
)

var oldest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

var providerRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,31}$`)

// Decode parses and validates one request line (without its newline). It
// returns the stable error code of DESIGN §4 on failure, checked in this
// order: invalid_json (not UTF-8, not a JSON object, trailing bytes),
// unsupported_version (an envelope or event schemaVersion other than the
// number 1), invalid_event (wrong types, missing or malformed fields,
// dates in the future beyond maxSkew or before 2000), unknown_kind, and
// reserved_hook_name. Authorization is the caller's.
//
// Unknown fields are ignored. sessionID may be null or absent (native
// events carry none); message and hookName may be absent.
//
// Identifiers (id, runID, surfaceID, sessionID) and hookName are names, so
// control characters, bidi overrides and line separators in them are
// refused. message is free text that seed 004 does not constrain: it is
// kept as sent, newlines and even escape sequences included, because
// refusing it would lose the state change (an approval request nobody
// sees); everything that prints it to a terminal strips it (termtext).
//
// Decoding is encoding/json's: like it, a key matches its field in any
// letter case, and of two keys for one field the last wins. (A purpose-built
// scanner saved about 4 µs of CPU per request; a hook's process start costs
// thousands of times that.)
func Decode(line []byte, now time.Time, maxSkew time.Duration) (Request, string) {
	if !utf8.Valid(line) {
		return Request{}, proto.ErrInvalidJSON
	}
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Request{}, proto.ErrInvalidJSON
	}
	var w wireEnvelope
	err := json.Unmarshal(line, &w)
	var typeErr *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &typeErr) {
		return Request{}, proto.ErrInvalidJSON
	}
	return validate(&w, typeErr != nil, now, maxSkew)
}

// validate checks a parsed envelope; typeErr says a field had the wrong
// JSON type.
func validate(w *wireEnvelope, typeErr bool, now time.Time, maxSkew time.Duration) (Request, string) {
	if code := checkVersion(w.SchemaVersion); code != "" {
		return Request{}, code
	}
	if w.Event != nil {
		if code := checkVersion(w.Event.SchemaVersion); code != "" {
			return Request{}, code
		}
	}
	if typeErr || w.Event == nil {
		return Request{}, proto.ErrInvalidEvent
	}
	e := w.Event
	var req Request
	if w.Capability != nil {
		req.Capability = *w.Capability
	}
	ev := &req.Event
	ev.SchemaVersion = proto.EventSchemaVersion
	var ok bool
	if ev.ID.RawValue, ok = ident(e.ID); !ok {
		return Request{}, proto.ErrInvalidEvent
	}
	if ev.RunID.RawValue, ok = ident(e.RunID); !ok {
		return Request{}, proto.ErrInvalidEvent
	}
	if e.SurfaceID != nil && e.SurfaceID.RawValue != nil && *e.SurfaceID.RawValue != "" {
		// Required for every provider but Codex, which is checked by
		// authorization (absent or empty: unauthorized). A surface id
		// that is present must be well formed.
		if ev.SurfaceID.RawValue, ok = ident(e.SurfaceID); !ok {
			return Request{}, proto.ErrInvalidEvent
		}
	}
	if e.SessionID != nil {
		if !validIdent(*e.SessionID) {
			return Request{}, proto.ErrInvalidEvent
		}
		s := *e.SessionID
		ev.SessionID = &s
	}
	if e.Provider == nil || !providerRe.MatchString(*e.Provider) {
		return Request{}, proto.ErrInvalidEvent
	}
	ev.Provider = *e.Provider
	if e.OccurredAt == nil {
		return Request{}, proto.ErrInvalidEvent
	}
	at, err := proto.ParseTime(*e.OccurredAt)
	if err != nil || at.Before(oldest) || at.After(now.Add(maxSkew)) {
		return Request{}, proto.ErrInvalidEvent
	}
	ev.OccurredAt = at
	if e.Message != nil {
		ev.Message = *e.Message
	}
	if e.HookName != nil {
		h := *e.HookName
		if len(h) > maxHookNameLen || hasControl(h) {
			return Request{}, proto.ErrInvalidEvent
		}
		ev.HookName = h
	}
	if e.Kind == nil || *e.Kind == "" {
		return Request{}, proto.ErrInvalidEvent
	}
	ev.Kind = proto.EventKind(*e.Kind)
	if !ev.Kind.Valid() {
		return Request{}, proto.ErrUnknownKind
	}
	if ReservedHookName(ev.HookName) {
		return Request{}, proto.ErrReservedHookName
	}
	return req, ""
}

// ReservedHookName reports whether a hook name is one only the daemon may
// use (prefix "muster.", in any letter case).
func ReservedHookName(h string) bool {
	p := proto.ReservedHookPrefix
	return len(h) >= len(p) && strings.EqualFold(h[:len(p)], p)
}

func checkVersion(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return proto.ErrInvalidEvent
	}
	if string(raw) == "1" {
		return ""
	}
	var v float64
	if json.Unmarshal(raw, &v) != nil || v != proto.EventSchemaVersion {
		return proto.ErrUnsupportedVersion
	}
	return ""
}

func ident(id *wireID) (string, bool) {
	if id == nil || id.RawValue == nil || !validIdent(*id.RawValue) {
		return "", false
	}
	return *id.RawValue, true
}

func validIdent(s string) bool {
	return s != "" && len(s) <= maxIDLen && !hasControl(s) && strings.TrimSpace(s) == s
}

// hasControl reports whether s holds a C0 or C1 control, DEL, a bidi
// embedding, override or isolate control, or a line or paragraph
// separator: anything that changes how the text around it is shown.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x2028 || r == 0x2029 {
			return true
		}
	}
	return false
}
