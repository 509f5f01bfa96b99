package hookinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/musterhq/muster/internal/provider"
)

// This file is a small surgical JSON editor. It parses a document into a
// tree of byte spans and changes it only by splicing text into or out of
// those spans, so everything it does not touch (key order, formatting,
// unknown keys, comments in JSONC files, CRLF line ends) stays byte for byte.
// Insertion and removal are exact inverses: removing an element that was
// appended restores the bytes from before the append. TestRoundTrip,
// TestSetupGolden and FuzzSetupRemove hold it to that, byte for byte.
//
// Why not a library. The maintained Go JSONC package,
// github.com/tailscale/hujson (served only as pseudo-versions), was tried
// first, in both roles it could play (issue 14):
//
//   - As the editor: it edits by RFC 6902 Patch and then Pack. An added
//     member comes out compact on one line after the last one, whatever the
//     file's indentation (Format would fix that by reformatting the whole
//     file), so TestSetupGolden's text cannot be produced; and on
//     testdata/claude-settings-crlf.json, patching a member in and out again
//     turned the "\r\n" before the closing brace into "\n", so remove does
//     not give the original bytes back and TestRoundTrip fails.
//   - As the parser under these splices: its grammar (JWCC) is not the one
//     the files are read with. Gemini CLI strips comments with
//     strip-json-comments and then calls JSON.parse, so it refuses trailing
//     commas, which hujson accepts, and accepts a // comment at the end of
//     the file without a newline (and U+2028 in a comment), which hujson
//     refuses. Using it would take corrections in both directions, to
//     replace a span parser that only reads text encoding/json has already
//     validated.
//
// So the editor stays here: encoding/json decides validity, and the code
// below only records spans and splices text.

// node is one JSON value with its byte span [start, end) in the source.
type node struct {
	kind    byte // '{', '[', '"', '0' (number), 't', 'f', 'n'
	start   int
	end     int
	members []member // objects, in source order
	elems   []*node  // arrays
}

type member struct {
	key      string
	keyStart int
	keyEnd   int
	val      *node
}

// get returns the value of the last member named key (JSON.parse semantics
// for duplicate keys), or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

// index returns the position of the last member named key, or -1.
func (n *node) index(key string) int {
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return i
		}
	}
	return -1
}

// items returns the spans of the members or elements of a container.
func (n *node) items() [][2]int {
	var out [][2]int
	if n.kind == '{' {
		for _, m := range n.members {
			out = append(out, [2]int{m.keyStart, m.val.end})
		}
	} else {
		for _, e := range n.elems {
			out = append(out, [2]int{e.start, e.end})
		}
	}
	return out
}

// doc is a parsed JSON (or JSONC) document.
type doc struct {
	src   string // the document as stored
	clean string // src with comments blanked out; same offsets
	jsonc bool
	root  *node
}

// errInvalidJSON marks a document that does not parse.
var errInvalidJSON = errors.New("not valid JSON")

func parseDoc(src string, jsonc bool) (*doc, error) {
	clean := src
	if jsonc {
		var err error
		clean, err = blankComments(src)
		if err != nil {
			return nil, err
		}
	}
	if !json.Valid([]byte(clean)) {
		var v any
		err := json.Unmarshal([]byte(clean), &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: %v at byte %d", errInvalidJSON, se, se.Offset)
		}
		return nil, fmt.Errorf("%w: %v", errInvalidJSON, err)
	}
	p := &parser{s: clean}
	root, err := p.value()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidJSON, err)
	}
	if root.kind != '{' {
		return nil, fmt.Errorf("%w: the top level is not an object", errInvalidJSON)
	}
	return &doc{src: src, clean: clean, jsonc: jsonc, root: root}, nil
}

// blankComments replaces // and /* */ comments outside strings with spaces
// (newlines kept), so offsets are unchanged.
func blankComments(src string) (string, error) {
	b := []byte(src)
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				if b[i] != '\r' {
					b[i] = ' '
				}
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			j := bytes.Index(b[i+2:], []byte("*/"))
			if j < 0 {
				return "", fmt.Errorf("%w: unterminated /* comment at byte %d", errInvalidJSON, i)
			}
			end := i + 2 + j + 2
			for k := i; k < end; k++ {
				if b[k] != '\n' && b[k] != '\r' {
					b[k] = ' '
				}
			}
			i = end - 1
		}
	}
	return string(b), nil
}

// parser builds the span tree of text already validated by encoding/json.
type parser struct {
	s string
	i int
}

func (p *parser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (*node, error) {
	p.ws()
	if p.i >= len(p.s) {
		return nil, errors.New("unexpected end")
	}
	n := &node{start: p.i}
	switch c := p.s[p.i]; c {
	case '{':
		n.kind = '{'
		p.i++
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			break
		}
		for {
			p.ws()
			ks := p.i
			if err := p.str(); err != nil {
				return nil, err
			}
			ke := p.i
			key := p.s[ks+1 : p.i-1]
			if strings.IndexByte(key, '\\') >= 0 {
				if json.Unmarshal([]byte(p.s[ks:p.i]), &key) != nil {
					return nil, fmt.Errorf("bad key at byte %d", ks)
				}
			}
			p.ws()
			p.i++ // ':'
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, member{key: key, keyStart: ks, keyEnd: ke, val: v})
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			p.i++ // '}'
			break
		}
	case '[':
		n.kind = '['
		p.i++
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			break
		}
		for {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			p.i++ // ']'
			break
		}
	case '"':
		n.kind = '"'
		if err := p.str(); err != nil {
			return nil, err
		}
	case 't', 'f', 'n':
		n.kind = c
		for p.i < len(p.s) && p.s[p.i] >= 'a' && p.s[p.i] <= 'z' {
			p.i++
		}
	default:
		n.kind = '0'
		for p.i < len(p.s) && strings.IndexByte("+-.0123456789eE", p.s[p.i]) >= 0 {
			p.i++
		}
	}
	n.end = p.i
	return n, nil
}

func (p *parser) str() error {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return fmt.Errorf("expected string at byte %d", p.i)
	}
	for p.i++; p.i < len(p.s); p.i++ {
		switch p.s[p.i] {
		case '\\':
			p.i++
		case '"':
			p.i++
			return nil
		}
	}
	return errors.New("unterminated string")
}

// raw returns the comment-free text of n.
func (d *doc) raw(n *node) string { return d.clean[n.start:n.end] }

// style is how new text is formatted so it matches the file.
type style struct {
	nl    string // line end
	unit  string // one level of indentation; "" means compact, one line
	colon string // between a key and its value
}

func detectStyle(d *doc) style {
	st := style{nl: "\n", unit: "  ", colon: ": "}
	if strings.Contains(d.src, "\r\n") {
		st.nl = "\r\n"
	}
	root := d.root
	if len(root.members) > 0 {
		m := root.members[0]
		between := d.clean[root.start+1 : m.keyStart]
		if k := strings.LastIndexByte(between, '\n'); k >= 0 {
			st.unit = leadingBlank(between[k+1:])
			if st.unit == "" {
				st.unit = "  "
			}
		} else {
			st.unit = ""
		}
		if colon := d.clean[m.keyEnd:m.val.start]; !strings.Contains(colon, " ") {
			st.colon = ":"
		}
	}
	return st
}

func leadingBlank(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[:i]
}

// lineIndent returns the indentation of the line holding byte pos.
func (d *doc) lineIndent(pos int) string {
	k := strings.LastIndexByte(d.src[:pos], '\n')
	return leadingBlank(d.src[k+1:])
}

// object is an ordered JSON object for generated text; the providers'
// hook entries are built of them.
type object = provider.Object

type kv = provider.Field

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// encode formats v (object, []any, string, int, bool) starting at indent.
func (st style) encode(v any, indent string) string {
	switch x := v.(type) {
	case object:
		if len(x) == 0 {
			return "{}"
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = quote(e.Key) + st.colon + st.encode(e.Value, indent+st.unit)
		}
		return st.wrap("{", "}", parts, indent)
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = st.encode(e, indent+st.unit)
		}
		return st.wrap("[", "]", parts, indent)
	case string:
		return quote(x)
	case int:
		return strconv.Itoa(x)
	case bool:
		return strconv.FormatBool(x)
	}
	panic(fmt.Sprintf("hookinstall: cannot encode %T", v))
}

func (st style) wrap(open, close string, parts []string, indent string) string {
	if st.unit == "" {
		return open + strings.Join(parts, ",") + close
	}
	inner := indent + st.unit
	return open + st.nl + inner + strings.Join(parts, ","+st.nl+inner) + st.nl + indent + close
}

// splice returns src with [start, end) replaced by text.
func splice(src string, start, end int, text string) string {
	return src[:start] + text + src[end:]
}

// appendItem returns the source with text (a formatted member "key": value,
// or an element) appended to container c. textFor formats the item for a
// given indentation.
func (d *doc) appendItem(c *node, st style, textFor func(indent string) string) string {
	items := c.items()
	open, close := c.start+1, c.end-1
	if len(items) > 0 {
		last := items[len(items)-1]
		prevEnd := open
		if len(items) > 1 {
			prevEnd = items[len(items)-2][1]
		}
		between := d.clean[prevEnd:last[0]]
		if k := strings.LastIndexByte(between, '\n'); k >= 0 && st.unit != "" {
			indent := leadingBlank(between[k+1:])
			return splice(d.src, last[1], last[1], ","+st.nl+indent+textFor(indent))
		}
		sep := strings.TrimLeft(between, ",")
		sep = leadingBlank(sep)
		return splice(d.src, last[1], last[1], ","+sep+textFor(""))
	}
	inner := d.src[open:close]
	blank := strings.TrimSpace(d.clean[open:close]) == "" && strings.TrimSpace(inner) == ""
	if st.unit == "" {
		if blank {
			return splice(d.src, open, close, textFor(""))
		}
		return splice(d.src, open, open, textFor(""))
	}
	base := d.lineIndent(c.start)
	ind := base + st.unit
	text := st.nl + ind + textFor(ind)
	if blank {
		return splice(d.src, open, close, text+st.nl+base)
	}
	return splice(d.src, open, open, text)
}

// appendMember appends "key": v to object c.
func (d *doc) appendMember(c *node, st style, key string, v any) string {
	return d.appendItem(c, st, func(indent string) string {
		return quote(key) + st.colon + st.encode(v, indent)
	})
}

// appendElement appends v to array c.
func (d *doc) appendElement(c *node, st style, v any) string {
	return d.appendItem(c, st, func(indent string) string {
		return st.encode(v, indent)
	})
}

// removeItem returns the source without item i of container c, undoing
// appendItem exactly.
func (d *doc) removeItem(c *node, i int) string {
	items := c.items()
	open, close := c.start+1, c.end-1
	it := items[i]
	switch {
	case i > 0:
		return splice(d.src, items[i-1][1], it[1], "")
	case len(items) > 1:
		return splice(d.src, it[0], items[1][0], "")
	}
	before := strings.TrimSpace(d.src[open:it[0]]) == ""
	after := strings.TrimSpace(d.src[it[1]:close]) == ""
	switch {
	case before && after:
		return splice(d.src, open, close, "")
	case before:
		return splice(d.src, open, it[1], "")
	}
	return splice(d.src, it[0], it[1], "")
}

// equalJSON reports whether two JSON texts hold the same value.
func equalJSON(a, b string) bool {
	var x, y any
	da := json.NewDecoder(strings.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(strings.NewReader(b))
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
