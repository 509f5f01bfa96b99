package termsignal

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// AppendTitle appends an OSC 2 sequence setting the window title, ended by
// ESC \, for attach snapshots. Control characters and invalid UTF-8 are
// dropped from title so that it cannot end the sequence early.
func AppendTitle(dst []byte, title string) []byte {
	dst = append(dst, esc, ']', '2', ';')
	for _, r := range strings.ToValidUTF8(title, "") {
		if unicode.IsControl(r) {
			continue
		}
		dst = utf8.AppendRune(dst, r)
	}
	return append(dst, esc, '\\')
}

// BellLimiter debounces bells: programs ring several at once, and a pane
// raises one attention item for a burst. The zero value allows every bell;
// set Interval. The caller passes the time, so the limiter reads no clock.
type BellLimiter struct {
	Interval time.Duration
	last     time.Time
	rung     bool
}

// Allow reports whether a bell at now should be acted on: the first bell
// does, and then the first bell at least Interval after the last one that did.
func (l *BellLimiter) Allow(now time.Time) bool {
	if l.rung && now.Sub(l.last) < l.Interval {
		return false
	}
	l.last, l.rung = now, true
	return true
}
