package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

type keyKind int

const (
	kRune keyKind = iota
	kEnter
	kBackspace
	kCtrlC
	kCtrlD
	kEsc
	kEOF    // end of input or a read error: the terminal is gone
	kHangup // SIGHUP or SIGTERM
	kTimer  // a wait's deadline (not a key)
)

type key struct {
	kind keyKind
	r    rune
}

// keyDecoder turns terminal input bytes into keys. It understands what a
// test or a pane sends: printable UTF-8, \r or \n (one Enter for \r\n),
// backspace, Ctrl-C, Ctrl-D and Esc. Escape sequences (CSI, SS3, OSC and
// DCS replies, focus reports) are skipped; an ESC that ends a chunk is the
// Esc key, because a terminal sends a sequence in one write. Inside a
// bracketed paste a line end is text, not Enter.
type keyDecoder struct {
	pending []byte // an incomplete UTF-8 rune or escape sequence
	lastCR  bool
	paste   bool // inside a bracketed paste: line ends are text (a space)
}

// modesOn and modesOff switch bracketed paste and focus reports, as the
// real CLIs do at start and exit.
const (
	modesOn  = "\x1b[?2004h\x1b[?1004h"
	modesOff = "\x1b[?2004l\x1b[?1004l"
)

// maxPending bounds an unfinished escape sequence kept between reads.
const maxPending = 4096

// decode appends the keys in chunk to keys.
func (d *keyDecoder) decode(chunk []byte, keys []key) []key {
	buf := append(d.pending, chunk...)
	d.pending = nil
	i := 0
	for i < len(buf) {
		c := buf[i]
		prevCR := d.lastCR
		d.lastCR = false
		switch {
		case c == '\r' && d.paste, c == '\n' && d.paste:
			if c == '\r' || !prevCR {
				keys = append(keys, key{kind: kRune, r: ' '})
			}
			d.lastCR = c == '\r'
			i++
		case c == '\r':
			keys = append(keys, key{kind: kEnter})
			d.lastCR = true
			i++
		case c == '\n':
			if !prevCR {
				keys = append(keys, key{kind: kEnter})
			}
			i++
		case c == 0x7f || c == 0x08:
			keys = append(keys, key{kind: kBackspace})
			i++
		case c == 0x03:
			keys = append(keys, key{kind: kCtrlC})
			i++
		case c == 0x04:
			keys = append(keys, key{kind: kCtrlD})
			i++
		case c == 0x1b:
			if i+1 == len(buf) || buf[i+1] == 0x1b {
				keys = append(keys, key{kind: kEsc})
				i++
				continue
			}
			n, complete := escLen(buf[i:])
			if !complete {
				// An unfinished sequence: wait for the rest, unless it
				// is absurdly long.
				if len(buf)-i < maxPending {
					d.pending = append([]byte(nil), buf[i:]...)
				}
				return keys
			}
			switch string(buf[i : i+n]) {
			case "\x1b[200~":
				d.paste = true
			case "\x1b[201~":
				d.paste = false
			}
			i += n
		case c == '\t':
			keys = append(keys, key{kind: kRune, r: ' '})
			i++
		case c < 0x20:
			i++ // other control characters do nothing
		default:
			if !utf8.FullRune(buf[i:]) {
				d.pending = append([]byte(nil), buf[i:]...)
				return keys
			}
			r, n := utf8.DecodeRune(buf[i:])
			if r != utf8.RuneError {
				keys = append(keys, key{kind: kRune, r: r})
			}
			i += n
		}
	}
	return keys
}

// escLen returns the length of the escape sequence at the start of b (at
// least two bytes long), and whether it is complete.
func escLen(b []byte) (int, bool) {
	switch b[1] {
	case '[': // CSI: parameters, then a final byte 0x40-0x7e
		for j := 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				return j + 1, true
			}
		}
		return len(b), false
	case 'O': // SS3: one more byte
		if len(b) < 3 {
			return len(b), false
		}
		return 3, true
	case ']', 'P', '_', '^': // OSC, DCS, APC, PM: until BEL or ST
		for j := 2; j < len(b); j++ {
			if b[j] == 0x07 {
				return j + 1, true
			}
			if b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\' {
				return j + 2, true
			}
		}
		return len(b), false
	}
	return 2, true // Alt+key: ignored
}

// tty is the agent's terminal: raw input when stdin is a terminal, and an
// output writer that turns \n into \r\n (raw mode disables the driver's
// translation).
type tty struct {
	in      *os.File
	out     io.Writer
	restore func()
	keys    chan key
	isTTY   bool
}

func openTTY(in *os.File, out io.Writer) *tty {
	t := &tty{in: in, out: out, keys: make(chan key, 4096), restore: func() {}}
	fd := int(in.Fd())
	if term.IsTerminal(fd) {
		if st, err := term.MakeRaw(fd); err == nil {
			t.isTTY = true
			t.restore = func() { _ = term.Restore(fd, st) }
		}
	}
	return t
}

// readKeys feeds t.keys until the input ends.
func (t *tty) readKeys() {
	var d keyDecoder
	buf := make([]byte, 4096)
	var keys []key
	for {
		n, err := t.in.Read(buf)
		if n > 0 {
			keys = d.decode(buf[:n], keys[:0])
			for _, k := range keys {
				t.keys <- k
			}
		}
		if err != nil {
			t.keys <- key{kind: kEOF}
			return
		}
	}
}

// write prints s, translating \n to \r\n. Errors are ignored: after a
// hangup the terminal is gone but the agent still runs its exit hooks.
func (t *tty) write(s string) {
	if t == nil {
		return // the Codex daemon has no terminal
	}
	if !strings.Contains(s, "\n") {
		_, _ = io.WriteString(t.out, s)
		return
	}
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			b.WriteByte('\r')
		}
		b.WriteByte(s[i])
	}
	_, _ = t.out.Write(b.Bytes())
}
