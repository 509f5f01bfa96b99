package events

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// fastParse fills w from line when line is an envelope in the usual shape,
// and reports false (leaving w to be discarded) for anything that needs
// encoding/json to decide: it must never accept what encoding/json would
// decode differently. It accepts: one JSON object (surrounded by JSON
// whitespace) whose keys are exact, escape-free names, each at most once;
// schemaVersion a number; capability a string; event an object with
// schemaVersion a number, id/runID/surfaceID objects holding a rawValue
// string, sessionID a string or null, provider/kind/occurredAt/message/
// hookName strings (message and hookName may be null). Unknown keys may
// hold any JSON value up to a small nesting depth.
func fastParse(line []byte, w *wireEnvelope) bool {
	p := parser{b: line}
	p.ws()
	if !p.object(func(key []byte) bool {
		switch string(key) {
		case "schemaVersion":
			if w.SchemaVersion != nil {
				return false
			}
			w.SchemaVersion = p.number()
			return w.SchemaVersion != nil
		case "capability":
			if w.Capability != nil {
				return false
			}
			w.Capability = p.str()
			return w.Capability != nil
		case "event":
			if w.Event != nil {
				return false
			}
			w.Event = &wireEvent{}
			return p.event(w.Event)
		}
		return !foldsToKnown(key, envelopeKeys) && p.skip(0)
	}) {
		return false
	}
	p.ws()
	return p.i == len(p.b)
}

var (
	envelopeKeys = []string{"schemaVersion", "capability", "event"}
	eventKeys    = []string{"schemaVersion", "id", "runID", "sessionID", "surfaceID", "provider", "kind", "occurredAt", "message", "hookName"}
	idKeys       = []string{"rawValue"}
)

// foldsToKnown reports whether an unknown key would still match a known
// field in encoding/json, which matches names case-insensitively.
func foldsToKnown(key []byte, known []string) bool {
	if !utf8.Valid(key) {
		return true
	}
	for _, k := range known {
		if strings.EqualFold(string(key), k) {
			return true
		}
	}
	// Non-ASCII keys may fold to ASCII ones (U+017F ſ to s, U+212A K to
	// k): leave them to encoding/json.
	for _, c := range key {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

type parser struct {
	b []byte
	i int
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// object parses {"key": value, ...}, calling field with the parser at each
// value (after the colon and whitespace); field must consume the value.
func (p *parser) object(field func(key []byte) bool) bool {
	if p.peek() != '{' {
		return false
	}
	p.i++
	p.ws()
	if p.peek() == '}' {
		p.i++
		return true
	}
	for {
		key, ok := p.rawKey()
		if !ok {
			return false
		}
		p.ws()
		if p.peek() != ':' {
			return false
		}
		p.i++
		p.ws()
		if !field(key) {
			return false
		}
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
			p.ws()
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// rawKey reads a string without escapes.
func (p *parser) rawKey() ([]byte, bool) {
	if p.peek() != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return p.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string value, undoing the common escapes; nil when it
// cannot (encoding/json decides then).
func (p *parser) str() *string {
	if p.peek() != '"' {
		return nil
	}
	start := p.i + 1
	j := start
	for ; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			s := string(p.b[start:j])
			p.i = j + 1
			return &s
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	if j >= len(p.b) || p.b[j] < 0x20 {
		return nil
	}
	// Escapes: simple ones only; \\u is left to encoding/json.
	buf := append([]byte(nil), p.b[start:j]...)
	for j < len(p.b) {
		c := p.b[j]
		switch {
		case c == '"':
			s := string(buf)
			p.i = j + 1
			return &s
		case c < 0x20:
			return nil
		case c != '\\':
			buf = append(buf, c)
			j++
			continue
		}
		if j+1 >= len(p.b) {
			return nil
		}
		switch p.b[j+1] {
		case '"', '\\', '/':
			buf = append(buf, p.b[j+1])
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		default:
			return nil
		}
		j += 2
	}
	return nil
}

// strOrNull reads a string or null into *dst (nil for null).
func (p *parser) strOrNull(dst **string) bool {
	if p.literal("null") {
		*dst = nil
		return true
	}
	*dst = p.str()
	return *dst != nil
}

func (p *parser) literal(lit string) bool {
	if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
		p.i += len(lit)
		return true
	}
	return false
}

// number reads a JSON number and returns its bytes.
func (p *parser) number() json.RawMessage {
	start := p.i
	if p.peek() == '-' {
		p.i++
	}
	switch c := p.peek(); {
	case c == '0':
		p.i++
	case c >= '1' && c <= '9':
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
	default:
		return nil
	}
	if p.peek() == '.' {
		p.i++
		if !p.digits() {
			return nil
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if !p.digits() {
			return nil
		}
	}
	return json.RawMessage(p.b[start:p.i])
}

func (p *parser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// maxSkipDepth bounds the nesting of unknown values the fast path skips.
const maxSkipDepth = 32

// skip consumes any JSON value, validating it.
func (p *parser) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	switch c := p.peek(); {
	case c == '"':
		return p.str() != nil
	case c == '{':
		return p.object(func(key []byte) bool { return p.skip(depth + 1) })
	case c == '[':
		p.i++
		p.ws()
		if p.peek() == ']' {
			p.i++
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			p.ws()
			switch p.peek() {
			case ',':
				p.i++
				p.ws()
			case ']':
				p.i++
				return true
			default:
				return false
			}
		}
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number() != nil
	}
	return false
}

// id reads {"rawValue": "..."} (other keys skipped).
func (p *parser) id(dst **wireID) bool {
	if *dst != nil || p.peek() != '{' {
		return false
	}
	id := &wireID{}
	*dst = id
	return p.object(func(key []byte) bool {
		if string(key) == "rawValue" {
			if id.RawValue != nil {
				return false
			}
			id.RawValue = p.str()
			return id.RawValue != nil
		}
		return !foldsToKnown(key, idKeys) && p.skip(1)
	})
}

func (p *parser) event(e *wireEvent) bool {
	seen := 0
	once := func(bit int) bool {
		if seen&(1<<bit) != 0 {
			return false
		}
		seen |= 1 << bit
		return true
	}
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "schemaVersion":
			if e.SchemaVersion != nil {
				return false
			}
			e.SchemaVersion = p.number()
			return e.SchemaVersion != nil
		case "id":
			return p.id(&e.ID)
		case "runID":
			return p.id(&e.RunID)
		case "surfaceID":
			return p.id(&e.SurfaceID)
		case "sessionID":
			return once(0) && p.strOrNull(&e.SessionID)
		case "provider":
			return once(1) && p.strInto(&e.Provider)
		case "kind":
			return once(2) && p.strInto(&e.Kind)
		case "occurredAt":
			return once(3) && p.strInto(&e.OccurredAt)
		case "message":
			return once(4) && p.strOrNull(&e.Message)
		case "hookName":
			return once(5) && p.strOrNull(&e.HookName)
		}
		return !foldsToKnown(key, eventKeys) && p.skip(1)
	})
}

func (p *parser) strInto(dst **string) bool {
	*dst = p.str()
	return *dst != nil
}
