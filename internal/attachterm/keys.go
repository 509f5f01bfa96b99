package attachterm

import (
	"fmt"

	"github.com/musterhq/muster/internal/config"
)

// Action is what the user's input asked of the attached side.
type Action int

const (
	Type   Action = iota // nothing: every key is for the pane
	Detach               // the detach key
	Copy                 // the copy-mode key
	Scroll               // the wheel turned up, while the mouse is the attached side's
)

// Keys finds the attached side's own keys in the user's input, for
// whichever side reads the terminal (the daemon holding it, or the attach
// client): the copy key (unless the detach key comes first), the detach
// key, and, while Mouse says the attached side owns the mouse, the wheel.
// It is the one key scan of an attach.
type Keys struct {
	Detach config.Key
	Copy   config.Key // none when it has no sequences
	Mouse  *Mouse     // nil: the mouse is never the attached side's
	in     MouseInput
}

// Scan splits one read of input. pane is what goes to the pane before
// the first key of the attached side's; act says which key that was;
// rest is what was typed after it, and wheels, for Scroll, the turns from
// the one that opened copy mode on.
func (k *Keys) Scan(p []byte) (pane []byte, act Action, rest []byte, wheels []Wheel) {
	data, ws := k.Split(p)
	for i, w := range ws {
		if w == WheelUp {
			// Copy mode takes the keys typed with the wheel, as the
			// client does.
			return nil, Scroll, data, ws[i:]
		}
	}
	pane, act, rest = k.Find(data, false)
	return pane, act, rest, nil
}

// Split takes the attached side's own mouse reports out of one read of
// input while it owns the mouse, and returns the keys left and the wheel
// turns among the reports, in order.
func (k *Keys) Split(p []byte) (keys []byte, wheels []Wheel) {
	if k.Mouse == nil || !k.Mouse.Owned() {
		return p, nil
	}
	return k.in.Split(p)
}

// Find finds the attached side's first key in keys (Split's result).
// While copy mode has the screen (copying), only the detach key is the
// attached side's: copy mode reads every other key, its own included.
// before is what was typed before that key (for the pane, or for copy
// mode), act which key it was, and rest what was typed after it; with no
// key, before is all of keys and act is Type.
func (k *Keys) Find(keys []byte, copying bool) (before []byte, act Action, rest []byte) {
	if !copying && len(k.Copy.Sequences) > 0 {
		if j, l := k.Copy.Find(keys); j >= 0 {
			if i, _ := k.Detach.Find(keys[:j]); i < 0 {
				return keys[:j], Copy, keys[j+l:]
			}
		}
	}
	if i, l := k.Detach.Find(keys); i >= 0 {
		return keys[:i], Detach, keys[i+l:]
	}
	return keys, Type, nil
}

// Pending reports whether Split holds the start of a sequence: when the
// terminal has nothing more to read within the escape time, the reader
// sends Flush to the pane.
func (k *Keys) Pending() bool { return k.in.Pending() }

// Flush returns what Split held, as keys typed.
func (k *Keys) Flush() []byte { return k.in.Flush() }

// Hint is the sequence that shows one line of text, already safe to
// print, on row rows of the terminal in reverse video, leaving the cursor
// where it was; the program's next redraw replaces it.
func Hint(text string, rows int) string {
	return fmt.Sprintf("\x1b7\x1b[%d;1H\x1b[0;7m\x1b[2K muster: %s \x1b[0m\x1b8", rows, text)
}
