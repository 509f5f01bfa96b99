package attachterm

import (
	"bytes"
	"strings"
)

// Enter pushes the user's window title (CSI 22 t) and switches the user's
// terminal to its alternate screen, as tmux does, so that detaching brings
// the user's own screen back untouched. The attached side writes it once,
// before any pane output.
const Enter = "\x1b[22;0t\x1b[?1049h\x1b[H\x1b[2J"

// Filter keeps pane output on the user's alternate screen. Attach puts
// the user's terminal on its alternate screen for the whole attachment, so
// a pane program switching screens (CSI ?1049/?1047/?47 h and l) must not
// switch the user's terminal back to its main screen, where the output
// would stay after detach. Entering the pane's alternate screen becomes
// save cursor and clear; leaving it becomes clear and restore cursor, and
// the daemon follows with a snapshot that repaints the pane's main screen.
// The filter keeps a sequence split across writes until it is complete.
type Filter struct {
	held []byte // an unfinished "ESC [ ?" sequence from the last chunk
	out  []byte
	// Mouse, when set, follows the program's mouse modes (mouse.go).
	Mouse *Mouse
}

// maxHeld bounds a held sequence: anything longer is no mode switch we
// rewrite and passes through as it is.
const maxHeld = 64

// Filter returns p with alternate-screen switches rewritten, followed by
// what moves the mouse between the client and the program when the
// program's mouse modes changed. The result is valid until the next call.
func (f *Filter) Filter(p []byte) []byte {
	out := f.modes(p)
	if f.Mouse != nil {
		out = f.Mouse.sync(out)
		f.out = out
	}
	return out
}

func (f *Filter) modes(p []byte) []byte {
	if len(f.held) > 0 {
		p = append(f.held, p...)
		f.held = nil
	}
	f.out = f.out[:0]
	for {
		i := bytes.Index(p, []byte("\x1b[?"))
		if i < 0 {
			// Keep a trailing ESC or ESC [ that may start a sequence.
			n := len(p)
			switch {
			case n >= 2 && p[n-2] == 0x1b && p[n-1] == '[':
				f.held = append(f.held, p[n-2:]...)
				p = p[:n-2]
			case n >= 1 && p[n-1] == 0x1b:
				f.held = append(f.held, 0x1b)
				p = p[:n-1]
			}
			f.out = append(f.out, p...)
			return f.out
		}
		f.out = append(f.out, p[:i]...)
		j := i + 3
		for j < len(p) && (p[j] >= '0' && p[j] <= '9' || p[j] == ';') {
			j++
		}
		if j == len(p) {
			if j-i <= maxHeld {
				f.held = append(f.held, p[i:]...)
			} else {
				f.out = append(f.out, p[i:]...)
			}
			return f.out
		}
		final := p[j]
		if final == 'h' || final == 'l' {
			f.out = appendModes(f.out, string(p[i+3:j]), final)
			if f.Mouse != nil {
				f.Mouse.set(string(p[i+3:j]), final)
			}
		} else {
			f.out = append(f.out, p[i:j+1]...)
		}
		p = p[j+1:]
	}
}

// appendModes writes a private mode set or reset with the alternate-screen
// modes replaced by their effect on a terminal that stays on one screen.
func appendModes(out []byte, params string, final byte) []byte {
	var keep []string
	var alt, save bool
	for _, m := range strings.Split(params, ";") {
		switch m {
		case "1049":
			alt, save = true, true
		case "1047", "47":
			alt = true
		default:
			keep = append(keep, m)
		}
	}
	if len(keep) > 0 {
		out = append(out, "\x1b[?"...)
		out = append(out, strings.Join(keep, ";")...)
		out = append(out, final)
	}
	if !alt {
		return out
	}
	switch {
	case final == 'h' && save:
		out = append(out, "\x1b7\x1b[2J"...)
	case final == 'h':
		out = append(out, "\x1b[2J"...)
	case save:
		out = append(out, "\x1b[2J\x1b8"...)
	default:
		out = append(out, "\x1b[2J"...)
	}
	return out
}
