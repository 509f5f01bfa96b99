package transcript

import (
	"bytes"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Member is one top-level member of a JSON object: the raw key (without
// its quotes, escapes left as written) and the raw value.
type Member struct {
	Key, Value []byte
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 10000

// Members checks that line is exactly one JSON object and returns its
// top-level members, appended to dst[:0] (pass the previous result back to
// reuse it). It is a fast single pass for JSONL parsers: structure, strings
// and escapes, numbers and literals are checked as RFC 8259 says, but
// control characters and invalid UTF-8 inside strings are accepted, as
// every decoder here tolerates them. ok is false for anything else; the
// members are then meaningless. Keys and values alias line.
func Members(line []byte, dst []Member) (members []Member, ok bool) {
	s := jscan{b: line}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return dst[:0], false
	}
	dst = dst[:0]
	if !s.object(func(k, v []byte) bool {
		dst = append(dst, Member{Key: k, Value: v})
		return true
	}) {
		return dst, false
	}
	s.ws()
	return dst, s.i == len(s.b)
}

// ValidJSON reports whether b is one JSON value, with the same leniency as
// Members. Every parser validates with it (see the package doc): gjson's
// Valid, used here before, recursed once per nesting level, and a 16 MiB
// line of '[' (transcript lines may have 64 MiB) overflowed the goroutine
// stack, a fatal error that no recover catches; ValidJSON stops at
// maxDepth.
func ValidJSON(b []byte) bool {
	s := jscan{b: b}
	if !s.value() {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

// ValidJSONString is ValidJSON of a string.
func ValidJSONString(s string) bool { return ValidJSON([]byte(s)) }

type jscan struct {
	b     []byte
	i     int
	depth int
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jscan) value() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(nil)
	case c == '[':
		return s.array()
	case c == '"':
		return s.str()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return s.num()
	}
	return false
}

// object scans an object at s.i; when each is non-nil it is called with
// every member (key without quotes), and when it returns false the scan
// stops there, reporting success.
func (s *jscan) object(each func(k, v []byte) bool) bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	defer func() { s.depth-- }()
	s.i++ // {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		kStart := s.i + 1
		if !s.str() {
			return false
		}
		kEnd := s.i - 1
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		vStart := s.i
		if !s.value() {
			return false
		}
		if each != nil && !each(s.b[kStart:kEnd], s.b[vStart:s.i]) {
			return true
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *jscan) array() bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	defer func() { s.depth-- }()
	s.i++ // [
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value() {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// str scans a string starting at its opening quote, jumping from quote to
// quote and checking only the escapes in between.
func (s *jscan) str() bool {
	b := s.b
	i := s.i + 1
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return false
		}
		q += i
		for {
			bs := bytes.IndexByte(b[i:q], '\\')
			if bs < 0 {
				s.i = q + 1
				return true
			}
			j := i + bs + 1
			if j >= len(b) {
				return false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i = j + 1
			case 'u':
				if j+4 >= len(b) {
					return false
				}
				for _, h := range b[j+1 : j+5] {
					if !isHex(h) {
						return false
					}
				}
				i = j + 5
			default:
				return false
			}
			if i > q { // the escape took the quote: look for the next one
				break
			}
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (s *jscan) lit(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

func (s *jscan) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

func (s *jscan) num() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.b) {
		return false
	}
	if s.b[s.i] == '0' {
		s.i++
	} else if s.digits() == 0 {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

// Elements checks that raw is one JSON array and returns its elements,
// appended to dst[:0]. Elements alias raw.
func Elements(raw []byte, dst [][]byte) (elems [][]byte, ok bool) {
	dst = dst[:0]
	ok = eachElement(raw, func(e []byte) bool {
		dst = append(dst, e)
		return true
	})
	return dst, ok
}

// eachMember calls each with the members of the object raw until it
// returns false; ok is false when raw is not an object, or not valid up
// to where each stopped.
func eachMember(raw []byte, each func(k, v []byte) bool) (ok bool) {
	s := jscan{b: raw}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	stopped := false
	if !s.object(func(k, v []byte) bool {
		if !each(k, v) {
			stopped = true
			return false
		}
		return true
	}) {
		return false
	}
	s.ws()
	return stopped || s.i == len(s.b)
}

// eachElement is eachMember for an array; a stop leaves the rest
// unchecked.
func eachElement(raw []byte, each func(e []byte) bool) (ok bool) {
	s := jscan{b: raw}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.ws()
		return s.i == len(s.b)
	}
	for {
		s.ws()
		start := s.i
		if !s.value() {
			return false
		}
		if !each(s.b[start:s.i]) {
			return true
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			s.ws()
			return s.i == len(s.b)
		default:
			return false
		}
	}
}

// Lookup returns the value of the first member named key, or nil. The key
// is compared as written, escapes and all.
func Lookup(members []Member, key string) []byte {
	for _, m := range members {
		if string(m.Key) == key {
			return m.Value
		}
	}
	return nil
}

// IsString reports whether raw, a value Members, Elements or Lookup
// returned, is a JSON string. It looks at the first byte only; Str checks
// the whole string.
func IsString(raw []byte) bool { return len(raw) >= 2 && raw[0] == '"' }

// Str decodes raw when it is exactly one JSON string (white space around
// it allowed, as encoding/json allows it), and returns "" otherwise. The
// result never aliases raw. Like Members it keeps control characters and
// invalid UTF-8 as written.
func Str(raw []byte) string {
	s := jscan{b: raw}
	s.ws()
	if s.i >= len(raw) || raw[s.i] != '"' {
		return ""
	}
	start := s.i
	if !s.str() {
		return ""
	}
	end := s.i
	s.ws()
	if s.i != len(raw) {
		return ""
	}
	inner := raw[start+1 : end-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	out, ok := unescape(inner)
	if !ok {
		return ""
	}
	return out
}

// unescape decodes the inside of a JSON string with escapes, copying the
// runs between backslashes in one go. Invalid escapes fail; lone
// surrogates become U+FFFD as encoding/json does.
func unescape(in []byte) (string, bool) {
	out := make([]byte, 0, len(in))
	for len(in) > 0 {
		bs := bytes.IndexByte(in, '\\')
		if bs < 0 {
			out = append(out, in...)
			break
		}
		out = append(out, in[:bs]...)
		in = in[bs:]
		if len(in) < 2 {
			return "", false
		}
		switch c := in[1]; c {
		case '"', '\\', '/':
			out = append(out, c)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(in[2:])
			if !ok {
				return "", false
			}
			in = in[6:]
			if utf16.IsSurrogate(r) {
				if len(in) >= 6 && in[0] == '\\' && in[1] == 'u' {
					if r2, ok := hex4(in[2:]); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							in = in[6:]
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", false
		}
		in = in[2:]
	}
	return string(out), true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// StrEqual reports whether raw is the JSON string s with no escapes.
func StrEqual(raw []byte, s string) bool {
	return len(raw) == len(s)+2 && raw[0] == '"' && string(raw[1:len(raw)-1]) == s
}

// Int decodes raw as an integer; fractions are truncated, anything else is 0.
func Int(raw []byte) int64 {
	if len(raw) == 0 || !(raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9') {
		return 0
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != f || f > math.MaxInt64 || f < math.MinInt64 {
		return 0
	}
	return int64(f)
}

// Bool reports whether raw is the literal true.
func Bool(raw []byte) bool { return string(raw) == "true" }
