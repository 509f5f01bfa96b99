package config

import (
	"bytes"
	"fmt"
	"strings"
)

// Key is a control key and every encoding a terminal may send for it: the
// C0 byte, the kitty keyboard protocol form, and xterm's modifyOtherKeys
// form (agents such as Claude Code turn the kitty protocol on).
type Key struct {
	Name      string
	Sequences [][]byte
}

// ParseKey parses "ctrl-X" or "^X" where X is a letter or one of @ [ \ ] ^ _.
func ParseKey(s string) (Key, error) {
	var c string
	switch {
	case strings.HasPrefix(strings.ToLower(s), "ctrl-"), strings.HasPrefix(strings.ToLower(s), "c-"):
		_, c, _ = strings.Cut(s, "-")
	case strings.HasPrefix(s, "^"):
		c = s[1:]
	default:
		return Key{}, fmt.Errorf("key %q: want ctrl-X or ^X", s)
	}
	if len(c) != 1 {
		return Key{}, fmt.Errorf("key %q: want a single character after ctrl-", s)
	}
	ch := c[0]
	if 'A' <= ch && ch <= 'Z' {
		ch += 'a' - 'A'
	}
	if !('a' <= ch && ch <= 'z') && !strings.ContainsRune(`@[\]^_`, rune(ch)) {
		return Key{}, fmt.Errorf("key %q: ctrl-%c has no control code", s, ch)
	}
	code := ch & 0x1f
	return Key{Name: s, Sequences: [][]byte{
		{code},
		fmt.Appendf(nil, "\x1b[%d;5u", ch),
		fmt.Appendf(nil, "\x1b[27;5;%d~", ch),
	}}, nil
}

// Find returns the index of the key in b and its length, or -1.
func (k Key) Find(b []byte) (int, int) {
	best, n := -1, 0
	for _, seq := range k.Sequences {
		if i := bytes.Index(b, seq); i >= 0 && (best < 0 || i < best) {
			best, n = i, len(seq)
		}
	}
	return best, n
}
