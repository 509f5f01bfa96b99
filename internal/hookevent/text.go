package hookevent

import (
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
