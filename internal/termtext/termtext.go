// Package termtext makes untrusted text safe to print to a terminal.
//
// Agents choose the text of event messages, hook names, notification
// bodies, pane titles and everything in their transcripts. Printed as it
// is, such text can drive the user's terminal: OSC 52 overwrites the
// clipboard, OSC 0/2 retitles the window, CSI 2J clears the screen, and
// bidirectional overrides make a line read differently from what it is.
// Every command that writes agent text to a terminal passes it through
// Strip (multi-line text) or Line (one table cell or line) first. JSON
// output keeps the text as it was; encoding/json escapes it.
//
// Escape sequences are removed whole, not just their ESC byte, so that no
// "]52;c;…" debris is left behind: ESC sequences (CSI, OSC, DCS, SOS, PM,
// APC and the short forms), and the same sequences introduced by the C1
// controls U+0080–U+009F, which some terminals obey in UTF-8 too. The
// package has no dependencies beyond the standard library, so that the
// hook helper can use it without growing its start-up cost.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Strip returns s with escape sequences and control characters removed.
// Newlines and tabs stay; CRLF and a lone CR become a newline. Invalid
// UTF-8 becomes U+FFFD. Printable text, in any script, is kept as it is,
// except the bidirectional embedding, override and isolate controls
// (U+202A–U+202E, U+2066–U+2069). Strip is idempotent.
func Strip(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		c := r
		if r == utf8.RuneError && n == 1 {
			// A stray byte: 0x80–0x9F are the 8-bit C1 controls of a
			// terminal that is not in UTF-8 mode; the rest show as U+FFFD.
			c = rune(s[i])
			if c >= 0xa0 {
				b.WriteRune(utf8.RuneError)
				i++
				continue
			}
		}
		i += n
		switch {
		case c == 0x1b:
			i = skipEscape(s, i)
		case c == '\r':
			if i < len(s) && s[i] == '\n' {
				i++
			}
			b.WriteByte('\n')
		case c == '\n' || c == '\t':
			b.WriteRune(c)
		case c < 0x20 || c == 0x7f:
			// other C0 controls: BEL, BS, NUL, CAN, SUB, …
		case c >= 0x80 && c < 0xa0:
			i = skipC1(s, i, c)
		case isBidi(c):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Line is Strip for one line of output (a table cell, a status line):
// every run of white space, line breaks and tabs included, becomes one
// space, and there is none at either end. Line is idempotent.
func Line(s string) string {
	s = Strip(s)
	if !needsFolding(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// Clip is Line cut to at most n runes, the last of them "…" when
// something was cut. It never splits a UTF-8 sequence.
func Clip(s string, n int) string {
	s = Line(s)
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return strings.TrimRightFunc(s[:i], unicode.IsSpace) + "…"
}

// clean reports whether Strip would return s unchanged.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			return cleanSlow(s[i:])
		}
	}
	return true
}

func cleanSlow(s string) bool {
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return false
			}
		case r < 0x20 && r != '\n' && r != '\t', r >= 0x7f && r < 0xa0, isBidi(r):
			return false
		}
	}
	return true
}

// needsFolding reports whether Line has white space to fold in s.
func needsFolding(s string) bool {
	prevSpace := true // a leading space needs trimming
	for _, r := range s {
		sp := unicode.IsSpace(r)
		if sp && (prevSpace || r != ' ') {
			return true
		}
		prevSpace = sp
	}
	return prevSpace && s != ""
}

// isBidi reports whether r is one of the bidirectional embedding, override
// or isolate controls ("Trojan Source", CVE-2021-42574).
func isBidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// skipEscape returns the index just past the escape sequence whose ESC
// ended before i. A lone ESC, or one followed by something that starts no
// sequence, is dropped on its own.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[':
		return skipCSI(s, i+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		// OSC, DCS, SOS, PM, APC
		return skipString(s, i+1)
	case c >= 0x20 && c <= 0x2f:
		// intermediates, then a final byte: ESC ( B, ESC # 8, …
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
			i++
		}
		return i
	case c >= 0x30 && c <= 0x7e:
		// ESC 7, ESC c, ESC M, …
		return i + 1
	}
	return i
}

// skipC1 is skipEscape for a C1 control, whose sequence (if it starts one)
// begins at i.
func skipC1(s string, i int, c rune) int {
	switch c {
	case 0x9b: // CSI
		return skipCSI(s, i)
	case 0x9d, 0x90, 0x98, 0x9e, 0x9f: // OSC, DCS, SOS, PM, APC
		return skipString(s, i)
	}
	return i
}

// skipCSI returns the index past a control sequence's parameters,
// intermediates and final byte, starting at i. As in a terminal, C0
// controls inside it do not end it, CAN and SUB cancel it, and ESC starts
// a new sequence; anything else that cannot belong to it ends it there.
func skipCSI(s string, i int) int {
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x20 && c <= 0x3f, c == 0x7f:
		case c >= 0x40 && c <= 0x7e, c == 0x18, c == 0x1a:
			return i + 1
		case c == 0x1b, c >= 0x80:
			return i
		}
	}
	return i
}

// skipString returns the index past a control string (OSC, DCS, SOS, PM,
// APC) whose body starts at i. It ends at BEL, at ST (ESC \ or U+009C),
// or is cancelled by CAN or SUB; any other ESC ends it and starts a new
// sequence. An unterminated string runs to the end of s, as it would in a
// terminal. Runes are decoded, so that a 0x9C byte inside a UTF-8
// character does not end the string (charmbracelet/x#848).
func skipString(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			r = rune(s[i])
		}
		switch r {
		case 0x07, 0x18, 0x1a, 0x9c:
			return i + n
		case 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i
		}
		i += n
	}
	return i
}

// Row is Strip for one row of a terminal screen shown inside another
// (the dashboard's preview of a pane): SGR sequences (ESC [ digits, ';' and
// ':' m: colours and attributes, which move nothing and reach nothing
// outside the text) are kept as they are; every other sequence and control
// is removed, and tabs and line breaks become one space each, so that the
// row stays one line whose width is its runes'.
func Row(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		c := r
		if r == utf8.RuneError && n == 1 {
			c = rune(s[i])
			if c >= 0xa0 {
				b.WriteRune(utf8.RuneError)
				i++
				continue
			}
		}
		start := i
		i += n
		switch {
		case c == 0x1b:
			i = skipEscape(s, i)
			if isSGR(s[start:i]) {
				b.WriteString(s[start:i])
			}
		case c == '\t' || c == '\n' || c == '\r':
			b.WriteByte(' ')
		case c < 0x20 || c == 0x7f:
		case c >= 0x80 && c < 0xa0:
			i = skipC1(s, i, c)
		case isBidi(c):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isSGR reports whether seq, a whole escape sequence, is ESC [ params m
// with only digits, ';' and ':' for parameters.
func isSGR(seq string) bool {
	if len(seq) < 3 || seq[0] != 0x1b || seq[1] != '[' || seq[len(seq)-1] != 'm' {
		return false
	}
	for i := 2; i < len(seq)-1; i++ {
		if c := seq[i]; (c < '0' || c > '9') && c != ';' && c != ':' {
			return false
		}
	}
	return true
}
