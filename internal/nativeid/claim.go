// Package nativeid is the identity capture of `muster hook capture`: it
// decodes what that command reads on standard input into a Claim, the
// provider's own ("native") session id for the Muster session of the pane
// the hook runs in, and holds the pure rules the daemon applies before it
// records the id (op native_capture; seed 000, "Session identity";
// DESIGN.md §6). It has nothing to do with `muster capture`, which prints
// a pane's screen.
//
// Decode accepts the canonical version 1 event
//
//	{"version":1,"event":"session_started","session_id":"…"}
//
// from any provider, and, for the providers with provider.NativeCapturer
// (those with hooks: claude, codex, gemini, cursor, opencode), the
// provider's native hook payload: any JSON object without a top-level
// "version" key that carries the id as "session_id" or "sessionId". A
// top-level "version" key makes a payload versioned, and a versioned
// payload fails closed unless it is exactly version 1 with event
// "session_started". Unknown additional fields are ignored in both forms.
//
// CheckProvider and CheckProcess are the daemon's checks that the claim
// comes from the session's own provider process; MusterSessionID is the
// CLI's "outside Muster, do nothing" test. Replacing the stored native id,
// reading stdin and printing errors belong to the daemon and the CLI.
package nativeid

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
)

const (
	// Version is the only canonical payload version this package accepts.
	Version = 1
	// EventSessionStarted is the only event name defined in version 1.
	EventSessionStarted = "session_started"
	// EnvSessionID names the variable that carries the Muster session id
	// into every first-class agent process.
	EnvSessionID = "MUSTER_AGENT_SESSION_ID"
	// MaxPayload bounds the stdin `muster hook capture` reads.
	// Session-start payloads are a few hundred bytes.
	MaxPayload = 1 << 20
	// MaxSessionIDLen bounds a native session id in bytes.
	MaxSessionIDLen = 512
)

// KnownProvider reports whether name is a provider Muster knows: a
// registered one, or a user-defined command.
func KnownProvider(name string) bool {
	_, ok := all.Lookup(name)
	return ok || name == provider.Custom
}

// acceptsNative reports whether the provider's own hook payloads may be
// piped to `muster hook capture` unchanged.
func acceptsNative(name string) bool {
	_, ok := all.As[provider.NativeCapturer](name)
	return ok
}

// Errors returned by Decode, CheckProvider and CheckProcess; match them with
// errors.Is. Every one means "record nothing": the CLI prints the error as
// one line and exits non-zero, but never with 2, which agents read as
// "block".
var (
	ErrUnknownProvider    = errors.New("unknown provider")
	ErrTooLarge           = errors.New("payload too large")
	ErrMalformed          = errors.New("malformed JSON")
	ErrUnknownVersion     = errors.New("unknown payload version")
	ErrUnknownEvent       = errors.New("unknown event")
	ErrMissingSessionID   = errors.New("missing session id")
	ErrEmptySessionID     = errors.New("empty session id")
	ErrSessionIDType      = errors.New("session id is not a string")
	ErrInvalidSessionID   = errors.New("invalid session id")
	ErrAmbiguousSessionID = errors.New("conflicting session ids")
	// ErrNativeNotAllowed means a provider without native hook payloads
	// (custom, muse) sent something other than the canonical event.
	ErrNativeNotAllowed = errors.New("native payload not accepted for this provider")
	// ErrProviderMismatch means the claim is tagged with a provider other
	// than the session's: a nested agent must not redirect its parent's
	// history.
	ErrProviderMismatch = errors.New("provider does not match the session")
)

// Format tells which form a payload had.
type Format int

const (
	// Canonical is the versioned Muster event.
	Canonical Format = iota + 1
	// Native is a provider's own hook payload.
	Native
)

func (f Format) String() string {
	switch f {
	case Canonical:
		return "canonical"
	case Native:
		return "native"
	}
	return "format(" + strconv.Itoa(int(f)) + ")"
}

// Claim is what one `muster hook capture` reported: a native session id,
// which the daemon records only after its checks.
type Claim struct {
	Provider  string // the provider the caller claimed (--provider)
	SessionID string // the provider-owned native session id
	Format    Format
	// Event is "session_started" for canonical payloads and the native
	// hook_event_name (or hookEventName) when a native payload has one.
	Event string
	// Source is the native "source" field (startup, resume, clear, compact)
	// when present; informational only.
	Source string
}

// Decode parses the stdin of `muster hook capture --provider provider`.
func Decode(provider string, stdin []byte) (Claim, error) {
	if !KnownProvider(provider) {
		return Claim{}, fmt.Errorf("decode capture: %w %q", ErrUnknownProvider, provider)
	}
	if len(stdin) > MaxPayload {
		return Claim{}, fmt.Errorf("decode capture: %w (%d bytes, limit %d)", ErrTooLarge, len(stdin), MaxPayload)
	}
	trimmed := bytes.TrimSpace(stdin)
	if len(trimmed) == 0 {
		return Claim{}, fmt.Errorf("decode capture: %w: empty input", ErrMalformed)
	}
	if trimmed[0] != '{' {
		return Claim{}, fmt.Errorf("decode capture: %w: not a JSON object", ErrMalformed)
	}
	if !utf8.Valid(trimmed) {
		return Claim{}, fmt.Errorf("decode capture: %w: invalid UTF-8", ErrMalformed)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &obj); err != nil {
		return Claim{}, fmt.Errorf("decode capture: %w: %s", ErrMalformed, jsonErr(err))
	}
	c := Claim{Provider: provider}
	if v, ok := obj["version"]; ok {
		if err := checkVersion(v); err != nil {
			return Claim{}, err
		}
		ev, ok := obj["event"]
		if !ok {
			return Claim{}, fmt.Errorf("decode capture: %w: no \"event\" field", ErrUnknownEvent)
		}
		var name string
		if err := json.Unmarshal(ev, &name); err != nil || name != EventSessionStarted {
			return Claim{}, fmt.Errorf("decode capture: %w %s in version %d", ErrUnknownEvent, shorten(ev), Version)
		}
		id, err := sessionID(obj, "session_id")
		if err != nil {
			return Claim{}, err
		}
		c.Format, c.Event, c.SessionID = Canonical, name, id
		return c, nil
	}
	if !acceptsNative(provider) {
		return Claim{}, fmt.Errorf("decode capture: %w %q; send {\"version\":1,\"event\":\"session_started\",\"session_id\":\"…\"}", ErrNativeNotAllowed, provider)
	}
	var id string
	var err error
	_, snake := obj["session_id"]
	_, camel := obj["sessionId"]
	switch {
	case snake && camel:
		a, errA := sessionID(obj, "session_id")
		b, errB := sessionID(obj, "sessionId")
		if errA != nil {
			return Claim{}, errA
		}
		if errB != nil {
			return Claim{}, errB
		}
		if a != b {
			return Claim{}, fmt.Errorf("decode capture: %w: session_id %q and sessionId %q", ErrAmbiguousSessionID, a, b)
		}
		id = a
	case camel:
		id, err = sessionID(obj, "sessionId")
	default:
		id, err = sessionID(obj, "session_id")
	}
	if err != nil {
		return Claim{}, err
	}
	c.Format, c.SessionID = Native, id
	c.Event = stringField(obj, "hook_event_name")
	if c.Event == "" {
		c.Event = stringField(obj, "hookEventName")
	}
	c.Source = stringField(obj, "source")
	return c, nil
}

func checkVersion(raw json.RawMessage) error {
	s := string(bytes.TrimSpace(raw))
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n == Version {
		return nil
	}
	return fmt.Errorf("decode capture: %w %s (this muster understands version %d)", ErrUnknownVersion, shorten(raw), Version)
}

// sessionID extracts and validates the string field key.
func sessionID(obj map[string]json.RawMessage, key string) (string, error) {
	raw, ok := obj[key]
	if !ok {
		return "", fmt.Errorf("decode capture: %w (no %q field)", ErrMissingSessionID, key)
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil || string(bytes.TrimSpace(raw)) == "null" {
		return "", fmt.Errorf("decode capture: %w: %s is %s", ErrSessionIDType, key, shorten(raw))
	}
	if id == "" {
		return "", fmt.Errorf("decode capture: %w in %q", ErrEmptySessionID, key)
	}
	if err := ValidSessionID(id); err != nil {
		return "", fmt.Errorf("decode capture: %w", err)
	}
	return id, nil
}

// ValidSessionID reports whether id can be stored as a native session id:
// non-empty, at most MaxSessionIDLen bytes of UTF-8, without control
// characters and without leading or trailing white space.
func ValidSessionID(id string) error {
	switch {
	case id == "":
		return ErrEmptySessionID
	case len(id) > MaxSessionIDLen:
		return fmt.Errorf("%w: %d bytes, limit %d", ErrInvalidSessionID, len(id), MaxSessionIDLen)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidSessionID)
	case strings.TrimSpace(id) != id:
		return fmt.Errorf("%w %q: leading or trailing space", ErrInvalidSessionID, id)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w %q: control character", ErrInvalidSessionID, id)
		}
	}
	return nil
}

func stringField(obj map[string]json.RawMessage, key string) string {
	var s string
	if raw, ok := obj[key]; ok && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

func shorten(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func jsonErr(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v at byte %d", se, se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "top level is not a JSON object"
	}
	return err.Error()
}

// CheckProvider reports whether a claim made for provider claimed may
// touch a session of provider sessionProvider: the names must be equal.
func CheckProvider(sessionProvider, claimed string) error {
	if sessionProvider != claimed {
		return fmt.Errorf("capture for %q: %w (session provider %q)", claimed, ErrProviderMismatch, sessionProvider)
	}
	return nil
}

// MusterSessionID returns the Muster session id of the calling agent and
// whether it is set. When it is not, `muster hook capture` exits 0 and
// records nothing, so a user-level hook is harmless outside Muster.
func MusterSessionID(getenv func(string) string) (string, bool) {
	id := strings.TrimSpace(getenv(EnvSessionID))
	return id, id != ""
}
