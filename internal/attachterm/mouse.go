package attachterm

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// The mouse wheel while attached, as tmux's "mouse on" gives it: while the
// pane's program has not asked for mouse reports, the client asks the
// user's terminal for them itself (button tracking, SGR encoding), turns
// the wheel into copy mode (up enters it and scrolls, down scrolls back and
// leaves at the bottom) and drops the other buttons, which the program did
// not ask for. Once the program asks for reports, the user's terminal gets
// the program's own modes back and every report goes to the program.
// `mouse = false` in config.toml leaves the user's terminal alone (its own
// selection then works without Shift).

// ownMouseOn and ownMouseOff switch the client's own reporting; ownMouseOn
// first drops encodings a program may have left, which would change how
// the reports are written.
const (
	ownMouseOn  = "\x1b[?1005l\x1b[?1015l\x1b[?1000h\x1b[?1006h"
	ownMouseOff = "\x1b[?1000l\x1b[?1006l"
)

// Mouse follows the mouse modes the pane's program set on the way to
// the user's terminal.
type Mouse struct {
	enabled bool // the client may own the mouse (config)
	// owned is read by the goroutine reading the user's keys (Owned):
	// whether the reports it sees are the client's.
	owned    *atomic.Bool
	tracking map[int]bool // 9, 1000, 1002, 1003 set by the program
	encoding map[int]bool // 1005, 1006, 1015 set by the program
	// reEncoded is set when the program changed an encoding since the
	// last sync: while the client owns the mouse, its SGR must be set
	// again.
	reEncoded bool
}

// NewMouse follows a program's mouse modes; enabled says whether the
// attached side may take the mouse for itself (config `mouse`).
func NewMouse(enabled bool) *Mouse {
	return &Mouse{enabled: enabled, owned: new(atomic.Bool), tracking: map[int]bool{}, encoding: map[int]bool{}}
}

// Start returns what takes the mouse at attach, before the pane's
// snapshot says what its program wants.
func (m *Mouse) Start() string {
	if !m.enabled {
		return ""
	}
	m.owned.Store(true)
	return ownMouseOn
}

// Owned reports whether the mouse reports in the user's input are the
// attached side's own (MouseInput takes them out) rather than the
// program's.
func (m *Mouse) Owned() bool { return m.owned.Load() }

// set records a private mode set (final 'h') or reset ('l') of the
// program's.
func (m *Mouse) set(params string, final byte) {
	for _, p := range strings.Split(params, ";") {
		n, err := strconv.Atoi(p)
		if err != nil {
			continue
		}
		switch n {
		case 9, 1000, 1002, 1003:
			m.tracking[n] = final == 'h'
		case 1005, 1006, 1015:
			m.encoding[n] = final == 'h'
			m.reEncoded = true
		}
	}
}

// sync appends to out what moves the mouse between the client and the
// program after the program's modes changed.
func (m *Mouse) sync(out []byte) []byte {
	if !m.enabled {
		return out
	}
	wants := false
	for _, on := range m.tracking {
		wants = wants || on
	}
	switch owned := m.owned.Load(); {
	case wants && owned:
		// Give the program its modes: ours off, then each of its own
		// again (it may have set them before ours were reset).
		m.owned.Store(false)
		out = append(out, ownMouseOff...)
		for _, modes := range []map[int]bool{m.tracking, m.encoding} {
			keys := make([]int, 0, len(modes))
			for n, on := range modes {
				if on {
					keys = append(keys, n)
				}
			}
			slices.Sort(keys)
			for _, n := range keys {
				out = append(out, "\x1b[?"...)
				out = strconv.AppendInt(out, int64(n), 10)
				out = append(out, 'h')
			}
		}
	case !wants && !owned, !wants && m.reEncoded:
		m.owned.Store(true)
		out = append(out, ownMouseOn...)
	}
	m.reEncoded = false
	return out
}

// Wheel is what a mouse report of the attached side's own means.
type Wheel int

const (
	WheelNone Wheel = iota // another button, a motion: dropped
	WheelUp
	WheelDown
)

// MouseInput takes the client's own mouse reports out of the user's input
// while the client owns the mouse. A report split across reads is held
// until it is complete, or until the reader sees that nothing followed
// within the escape time (Pending, Flush): a lone Esc is a key of its own.
type MouseInput struct {
	held []byte
}

// Pending reports whether Split holds the start of what may be a report:
// the reader must call Flush if nothing more is typed within the escape
// time.
func (in *MouseInput) Pending() bool { return len(in.held) > 0 }

// Flush returns what Split held, as keys typed: nothing completed it in
// time, so it was not a report (a lone Esc, Alt+[).
func (in *MouseInput) Flush() []byte {
	p := in.held
	in.held = nil
	return p
}

// maxReport bounds an SGR report: ESC [ < b ; x ; y M with three numbers.
const maxReport = 32

// Split returns the input without the client's reports, and the wheel
// turns among them in order.
func (in *MouseInput) Split(p []byte) (keys []byte, wheels []Wheel) {
	if len(in.held) > 0 {
		p = append(in.held, p...)
		in.held = nil
	}
	for {
		i := bytes.Index(p, []byte("\x1b[<"))
		if i < 0 {
			// A trailing ESC or ESC [ may start a report.
			n := len(p)
			switch {
			case n >= 2 && p[n-2] == 0x1b && p[n-1] == '[':
				in.held = append(in.held, p[n-2:]...)
				p = p[:n-2]
			case n >= 1 && p[n-1] == 0x1b:
				in.held = append(in.held, 0x1b)
				p = p[:n-1]
			}
			return append(keys, p...), wheels
		}
		keys = append(keys, p[:i]...)
		j := i + 3
		for j < len(p) && (p[j] >= '0' && p[j] <= '9' || p[j] == ';') {
			j++
		}
		if j == len(p) {
			if j-i <= maxReport {
				in.held = append(in.held, p[i:]...)
			} else {
				keys = append(keys, p[i:]...)
			}
			return keys, wheels
		}
		if p[j] == 'M' || p[j] == 'm' {
			fields := strings.Split(string(p[i+3:j]), ";")
			if b, err := strconv.Atoi(fields[0]); err == nil && p[j] == 'M' && b&64 != 0 && b&128 == 0 {
				// Shift, Meta and Ctrl (4, 8, 16) do not change the wheel.
				switch b & 3 {
				case 0:
					wheels = append(wheels, WheelUp)
				case 1:
					wheels = append(wheels, WheelDown)
				}
			}
		} else {
			// Not a report: pass it on as typed.
			keys = append(keys, p[i:j+1]...)
		}
		p = p[j+1:]
	}
}
