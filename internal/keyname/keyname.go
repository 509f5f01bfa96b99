// Package keyname owns tmux's key names (`send-keys` vocabulary: Enter,
// Escape, C-c, M-x, S-Up, F5, PageDown…) and the bytes an xterm-like
// terminal sends for each, so that `muster send --keys` types what a user
// pressing those keys would.
package keyname

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// modifiers, as xterm numbers them in CSI 1;m sequences (m = 1 + sum).
const (
	modShift = 1
	modMeta  = 2
	modCtrl  = 4
)

// special is a named key: its unmodified bytes, and how a modifier is
// added (CSI final letter or CSI number ~), when it can be.
type special struct {
	plain  string
	final  byte // CSI 1;m final for cursor keys, Home, End, F1–F4
	number int  // CSI number;m ~ for the editing keys and F5–F12
}

var specials = map[string]special{
	"enter":    {plain: "\r"},
	"escape":   {plain: "\x1b"},
	"tab":      {plain: "\t"},
	"btab":     {plain: "\x1b[Z"},
	"bspace":   {plain: "\x7f"},
	"space":    {plain: " "},
	"up":       {plain: "\x1b[A", final: 'A'},
	"down":     {plain: "\x1b[B", final: 'B'},
	"right":    {plain: "\x1b[C", final: 'C'},
	"left":     {plain: "\x1b[D", final: 'D'},
	"home":     {plain: "\x1b[H", final: 'H'},
	"end":      {plain: "\x1b[F", final: 'F'},
	"insert":   {plain: "\x1b[2~", number: 2},
	"ic":       {plain: "\x1b[2~", number: 2},
	"delete":   {plain: "\x1b[3~", number: 3},
	"dc":       {plain: "\x1b[3~", number: 3},
	"pageup":   {plain: "\x1b[5~", number: 5},
	"pgup":     {plain: "\x1b[5~", number: 5},
	"ppage":    {plain: "\x1b[5~", number: 5},
	"pagedown": {plain: "\x1b[6~", number: 6},
	"pgdn":     {plain: "\x1b[6~", number: 6},
	"npage":    {plain: "\x1b[6~", number: 6},
	"f1":       {plain: "\x1bOP", final: 'P'},
	"f2":       {plain: "\x1bOQ", final: 'Q'},
	"f3":       {plain: "\x1bOR", final: 'R'},
	"f4":       {plain: "\x1bOS", final: 'S'},
	"f5":       {plain: "\x1b[15~", number: 15},
	"f6":       {plain: "\x1b[17~", number: 17},
	"f7":       {plain: "\x1b[18~", number: 18},
	"f8":       {plain: "\x1b[19~", number: 19},
	"f9":       {plain: "\x1b[20~", number: 20},
	"f10":      {plain: "\x1b[21~", number: 21},
	"f11":      {plain: "\x1b[23~", number: 23},
	"f12":      {plain: "\x1b[24~", number: 24},
}

// Encode returns the bytes for a list of key names, or an error naming the
// first name that is not a key (nothing is encoded then).
func Encode(names []string) ([]byte, error) {
	var out []byte
	for _, n := range names {
		b, err := encode(n)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

func encode(name string) ([]byte, error) {
	mods, key := 0, name
	// Modifier prefixes (C-, M-, S-, also ^X), as tmux reads them; a lone
	// "C-" or "-" is the key itself.
	for len(key) > 2 && key[1] == '-' {
		switch key[0] {
		case 'C', 'c':
			mods |= modCtrl
		case 'M', 'm':
			mods |= modMeta
		case 'S', 's':
			mods |= modShift
		default:
			return nil, fmt.Errorf("key %q: unknown modifier %q (want C-, M- or S-)", name, key[:2])
		}
		key = key[2:]
	}
	if len(key) == 2 && key[0] == '^' {
		mods |= modCtrl
		key = key[1:]
	}
	if sp, ok := specials[strings.ToLower(key)]; ok {
		return encodeSpecial(name, strings.ToLower(key), sp, mods)
	}
	r, size := utf8.DecodeRuneInString(key)
	if size != len(key) || r == utf8.RuneError {
		return nil, fmt.Errorf("unknown key name %q (send text without --keys)", name)
	}
	var b []byte
	switch {
	case mods&modCtrl != 0:
		c, ok := ctrl(r)
		if !ok {
			return nil, fmt.Errorf("key %q: %c has no control code", name, r)
		}
		b = []byte{c}
	case mods&modShift != 0 && 'a' <= r && r <= 'z':
		b = []byte{byte(r) - 'a' + 'A'}
	default:
		b = []byte(key)
	}
	if mods&modMeta != 0 {
		b = append([]byte{0x1b}, b...)
	}
	return b, nil
}

func encodeSpecial(name, key string, sp special, mods int) ([]byte, error) {
	if mods == 0 {
		return []byte(sp.plain), nil
	}
	m := strconv.Itoa(1 + mods)
	switch {
	case sp.final != 0:
		return []byte("\x1b[1;" + m + string(sp.final)), nil
	case sp.number != 0:
		return []byte("\x1b[" + strconv.Itoa(sp.number) + ";" + m + "~"), nil
	case key == "tab" && mods == modShift:
		return []byte("\x1b[Z"), nil
	case key == "space" && mods == modCtrl:
		return []byte{0}, nil
	case mods == modMeta:
		// Meta is ESC before the key, as xterm sends it with metaSendsEscape.
		return []byte("\x1b" + sp.plain), nil
	}
	return nil, fmt.Errorf("key %q: no terminal sends %s with those modifiers", name, key)
}

// ctrl is the C0 code of Ctrl plus r.
func ctrl(r rune) (byte, bool) {
	switch {
	case 'a' <= r && r <= 'z':
		return byte(r - 'a' + 1), true
	case 'A' <= r && r <= 'Z':
		return byte(r - 'A' + 1), true
	case r == '@' || r == ' ' || r == '2':
		return 0, true
	case r == '?':
		return 0x7f, true
	case strings.ContainsRune(`[\]^_`, r):
		return byte(r) & 0x1f, true
	}
	return 0, false
}
