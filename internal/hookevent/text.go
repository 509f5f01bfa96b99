package hookevent

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/musterhq/muster/internal/termtext"
)

// cleanMessage makes payload text safe to store and show in a terminal:
// valid UTF-8, no escape sequences (removed whole by termtext) or control
// characters, whitespace runs collapsed to one space, at most MaxMessage
// bytes (cut at a rune boundary, marked "…").
func cleanMessage(s string) string {
	if s == "" {
		return ""
	}
	// Only the start is kept, and no request to events.sock is larger than
	// 64 KiB: bound the work on huge payload fields.
	s = termtext.Strip(s[:min(len(s), 64<<10)])
	var b strings.Builder
	b.Grow(min(len(s), MaxMessage+8))
	space := false
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.In(r, unicode.Cf) && r != '\u200d':
			// C0/C1 controls (ESC included) and format characters such as
			// bidi overrides never reach a terminal.
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if b.Len()+utf8.RuneLen(r) > MaxMessage-len("…") {
			b.WriteString("…")
			return b.String()
		}
		b.WriteRune(r)
	}
	return b.String()
}

// firstLine returns s up to its first line break, trimmed.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// join concatenates the non-empty parts with sep.
func join(sep string, parts ...string) string {
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// toolSummary describes a tool call in a few words: the tool name and the
// most telling argument (a command, a path, a URL, a pattern).
func toolSummary(tool string, input json.RawMessage) string {
	return join(": ", tool, toolArg(input))
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

// flexString decodes a JSON string, or anything else as its compact JSON
// text, so that a field whose type changes between versions never makes a
// whole payload unreadable.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*f = flexString(s)
		return nil
	}
	if string(b) == "null" {
		*f = ""
		return nil
	}
	*f = flexString(b)
	return nil
}

// flexBool decodes true/false, and treats anything else (null, strings,
// numbers) as false.
type flexBool bool

func (f *flexBool) UnmarshalJSON(b []byte) error {
	*f = flexBool(string(b) == "true")
	return nil
}
