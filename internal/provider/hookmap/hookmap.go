// Package hookmap is the vocabulary of hook payload mapping: what a
// provider's hook subpackage (internal/provider/<name>/<name>hook) reads
// out of one native hook payload (Intent), and how the hook helper
// (internal/hookevent) finds that mapping (Mapping, registered in
// internal/provider/all/hooks). The state rules that turn intents into
// events, the ids and the transport are hookevent's; a mapping only reads.
//
// It is linked into cmd/muster-hook, which every agent runs on every hook,
// so it and the hook subpackages import the standard library only (and
// little of it): see cmd/muster-hook/deps_test.go.
package hookmap

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Mapping is one provider's hook payload mapping.
type Mapping struct {
	// Provider is the provider's name: the argument of `muster hook event`
	// and the event's provider field.
	Provider string
	// Map reads one payload. A payload it cannot read yields an error
	// wrapping ErrMalformed (Malformed).
	Map func(payload []byte) (Intent, error)
	// JSONReply: the CLI parses the hook's stdout as JSON, so the helper
	// prints `{}` on every path.
	JSONReply bool
	// RoutedBySession: the CLI may run hooks from a process another pane
	// started, with that pane's environment or none, so events are sent
	// even without the pane environment (to the default events socket) and
	// the daemon routes them by session id (internal/hookroute).
	RoutedBySession bool
}

// Action is what a hook means for the run, before the state rules apply.
type Action int

const (
	Ignore    Action = iota // nothing to report; Intent.Why says why
	TurnStart               // a prompt started a turn
	Running                 // work goes on (a tool call, an answered dialog)
	// Busy: running, or the start of a turn when none is open (OpenCode's
	// session.status busy names no turn).
	Busy
	Approval // an approval dialog is shown
	// ApprovalEcho: a late second report of an approval already reported
	// by a PermissionRequest-style hook (Claude Code's
	// Notification(permission_prompt)).
	ApprovalEcho
	Input        // the agent waits for the user's input
	Succeeded    // the turn ended normally
	Failed       // the turn ended with an error
	Interrupted  // the turn was interrupted
	SessionEnd   // the session ended; an open turn is interrupted
	ChildSession // a sub-agent session was created; its events are ignored
)

// Intent is a mapping's reading of one payload.
type Intent struct {
	Hook    string // the provider's hook or event name
	Session string // provider-native session id, "" when the payload has none
	Act     Action
	Why     string // the reason, when Act is Ignore
	// TurnKey is the provider's own turn identifier, "" when the payload
	// has none. The run id derives from it, exactly as the native turn
	// reader's does (hookevent.TurnRunID).
	TurnKey  string
	Prompt   string    // the prompt, when the payload has it (fallback turn key)
	Stamp    string    // the payload's own timestamp, if any (fallback turn key)
	At       time.Time // the payload's own time, zero = now
	Message  string
	Subagent bool // the payload comes from a sub-agent of the session
	// Model is the model the payload names (Codex and Cursor name it in
	// every hook), "" when it names none; the daemon shows it.
	Model string
	// RequiresTurn: a hook without a turn key that arrives when no turn is
	// known is the echo of a turn never seen start (OpenCode's
	// session.idle and session.error) and is ignored, unless it asks for
	// approval or input.
	RequiresTurn bool
}

// ErrMalformed marks a payload the helper cannot read; it prints one warning
// and sends nothing.
var ErrMalformed = errors.New("malformed hook payload")

// Malformed returns an error wrapping ErrMalformed.
func Malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// Decode unmarshals a payload into v, any error wrapped as Malformed.
func Decode(payload []byte, v any) error {
	if err := json.Unmarshal(payload, v); err != nil {
		return Malformed("%v", err)
	}
	return nil
}

// FirstLine returns s up to its first line break, trimmed.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// Join concatenates the non-empty parts with sep.
func Join(sep string, parts ...string) string {
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// ToolSummary describes a tool call in a few words: the tool name and the
// most telling argument (a command, a path, a URL, a pattern).
func ToolSummary(tool string, input json.RawMessage) string {
	return Join(": ", tool, toolArg(input))
}

// toolArg picks the most telling argument of a tool's input object.
func toolArg(input json.RawMessage) string {
	if len(input) == 0 || input[0] != '{' {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "cmd", "file_path", "filePath", "path", "url", "query", "pattern", "description", "prompt"} {
		raw, ok := m[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
		var parts []string // Codex sometimes passes argv arrays
		if json.Unmarshal(raw, &parts) == nil && len(parts) > 0 {
			return strings.Join(parts, " ")
		}
	}
	return ""
}

// String decodes a JSON string, or anything else as its compact JSON
// text, so that a field whose type changes between versions never makes a
// whole payload unreadable.
type String string

// UnmarshalJSON implements json.Unmarshaler.
func (f *String) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*f = String(s)
		return nil
	}
	if string(b) == "null" {
		*f = ""
		return nil
	}
	*f = String(b)
	return nil
}

// Bool decodes true/false, and treats anything else (null, strings,
// numbers) as false.
type Bool bool

// UnmarshalJSON implements json.Unmarshaler.
func (f *Bool) UnmarshalJSON(b []byte) error {
	*f = Bool(string(b) == "true")
	return nil
}
