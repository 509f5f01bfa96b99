package daemon

import (
	"context"
	"strings"
	"time"
	"unicode"
)

// echoTimeout bounds how long `send --enter` waits for an agent to show
// the text it was sent before pressing Enter.
const echoTimeout = 5 * time.Second

// echoWatch tells when a program has shown text that was typed into its
// pane: the end of the text appears on the screen once more than before
// the typing. An agent TUI that shows the keys has read them, so an Enter
// written after that is read on its own. Timing alone cannot promise that:
// Gemini CLI 0.61 turns an Enter it processes within 30 ms of a typed
// character into a newline (its "fast return" paste guard), and a Node
// event loop that is busy for longer than any fixed pause reads the text
// and the Enter together.
type echoWatch struct {
	capture func() (string, error)
	needle  string
	before  int
}

// newEchoWatch notes how often the end of text shows before it is typed.
func newEchoWatch(capture func() (string, error), text string) *echoWatch {
	w := &echoWatch{capture: capture, needle: echoNeedle(text)}
	if w.needle != "" {
		screen, _ := capture()
		w.before = strings.Count(squeezeSpace(screen), w.needle)
	}
	return w
}

// wait polls the screen until it shows the text once more, timeout passes
// (a program that does not echo) or ctx ends; it reports whether the echo
// came.
func (w *echoWatch) wait(ctx context.Context, timeout time.Duration) bool {
	if w.needle == "" {
		return false
	}
	deadline := time.Now().Add(timeout)
	for {
		if screen, err := w.capture(); err == nil && strings.Count(squeezeSpace(screen), w.needle) > w.before {
			return true
		}
		if !time.Now().Before(deadline) || sleep(ctx, 20*time.Millisecond) != nil {
			return false
		}
	}
}

// echoNeedle is what of text to look for on the screen: the last 12
// characters of its last non-empty line without white space, since an
// input box may wrap or scroll a long text and pads or collapses spaces.
func echoNeedle(text string) string {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if r := []rune(squeezeSpace(lines[i])); len(r) > 0 {
			return string(r[max(0, len(r)-12):])
		}
	}
	return ""
}

// squeezeSpace drops white space and box-drawing characters, so that text
// an input box wrapped between its borders reads as one run.
func squeezeSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r >= 0x2500 && r <= 0x257f {
			return -1
		}
		return r
	}, s)
}
