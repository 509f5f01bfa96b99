package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DocValue is one value WalkObject read from a document.
type DocValue struct {
	// Key is the top-level member the value belongs to.
	Key string
	// Index is the value's position in the member's array when the member
	// is streamed element by element, -1 for the member's value itself.
	Index int
	// Value is the value read (its own copy of the text); missing when
	// TooLong or Malformed.
	Value Value
	// TooLong says the value was over the limit and skipped unread.
	TooLong bool
	// Malformed says the value's text is not valid JSON.
	Malformed bool
	// Offset is the byte offset of the value in the document.
	Offset int64
}

// maxKey bounds a member name; real documents' names are a few bytes.
const maxKey = 64 << 10

// WalkObject reads the JSON object in r a value at a time, so a document
// of any size is parsed in bounded memory (a Gemini CLI chat, an OpenCode
// export): each member is passed to fn, and a member named in arrays whose
// value is an array is passed element by element instead. A value longer
// than max bytes (DefaultMaxLine when max <= 0) is skipped without being
// held, reported with TooLong. fn returning false stops the walk. The
// error says where the document stopped being a readable object (it is not
// one, it is truncated); the values before it were passed already.
func WalkObject(r io.Reader, max int, arrays map[string]bool, fn func(DocValue) bool) error {
	if max <= 0 {
		max = DefaultMaxLine
	}
	d := &docReader{r: r, max: max, chunk: make([]byte, 0, bufferSize(r))}
	c, err := d.next()
	if err != nil {
		return d.fail(err, "no JSON document")
	}
	if c != '{' {
		return fmt.Errorf("at byte %d: the document is not a JSON object", d.off)
	}
	d.pos++
	first := true
	for {
		c, err := d.next()
		if err != nil {
			return d.fail(err, "truncated object")
		}
		if c == '}' {
			return nil
		}
		if !first {
			if c != ',' {
				return fmt.Errorf("at byte %d: expected , or } in the object", d.offset())
			}
			d.pos++
			if c, err = d.next(); err != nil {
				return d.fail(err, "truncated object")
			}
		}
		first = false
		if c != '"' {
			return fmt.Errorf("at byte %d: expected a member name", d.offset())
		}
		rawKey, tooLong, err := d.value(maxKey)
		if err != nil {
			return d.fail(err, "truncated member name")
		}
		if tooLong || !IsString(rawKey) {
			return fmt.Errorf("at byte %d: a member name over %d bytes", d.offset(), maxKey)
		}
		key := Str(rawKey)
		if c, err = d.next(); err != nil || c != ':' {
			return d.fail(err, "expected : after a member name")
		}
		d.pos++
		if c, err = d.next(); err != nil {
			return d.fail(err, "truncated object")
		}
		if arrays[key] && c == '[' {
			d.pos++
			for i := 0; ; i++ {
				c, err := d.next()
				if err != nil {
					return d.fail(err, "truncated array")
				}
				if c == ']' {
					d.pos++
					break
				}
				if i > 0 {
					if c != ',' {
						return fmt.Errorf("at byte %d: expected , or ] in the array", d.offset())
					}
					d.pos++
					if _, err := d.next(); err != nil {
						return d.fail(err, "truncated array")
					}
				}
				dv, err := d.docValue(key, i)
				if err != nil {
					return d.fail(err, "truncated array")
				}
				if !fn(dv) {
					return nil
				}
			}
			continue
		}
		dv, err := d.docValue(key, -1)
		if err != nil {
			return d.fail(err, "truncated object")
		}
		if !fn(dv) {
			return nil
		}
	}
}

type docReader struct {
	r     io.Reader
	max   int
	chunk []byte // read, not yet consumed from pos
	pos   int
	off   int64 // offset of chunk[0]
	buf   []byte
	eof   bool
}

func (d *docReader) offset() int64 { return d.off + int64(d.pos) }

func (d *docReader) fail(err error, what string) error {
	if errors.Is(err, io.EOF) || err == nil {
		return fmt.Errorf("at byte %d: %s", d.offset(), what)
	}
	return err
}

// fill reads more input; io.EOF when there is none.
func (d *docReader) fill() error {
	if d.eof {
		return io.EOF
	}
	d.off += int64(d.pos)
	if d.pos == 0 && len(d.chunk) == cap(d.chunk) {
		d.chunk = append(d.chunk, 0)[:len(d.chunk)] // grow: never read into no room
	}
	n := copy(d.chunk[:cap(d.chunk)], d.chunk[d.pos:])
	d.chunk, d.pos = d.chunk[:n], 0
	for {
		m, err := d.r.Read(d.chunk[n:cap(d.chunk)])
		d.chunk = d.chunk[:n+m]
		if m > 0 {
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				d.eof = true
			}
			return err
		}
	}
}

// next skips white space and returns the next byte without consuming it.
func (d *docReader) next() (byte, error) {
	for {
		for d.pos < len(d.chunk) {
			switch c := d.chunk[d.pos]; c {
			case ' ', '\t', '\r', '\n':
				d.pos++
			default:
				return c, nil
			}
		}
		if err := d.fill(); err != nil {
			return 0, err
		}
	}
}

func (d *docReader) docValue(key string, index int) (DocValue, error) {
	dv := DocValue{Key: key, Index: index, Offset: d.offset()}
	raw, tooLong, err := d.value(d.max)
	if err != nil {
		return dv, err
	}
	switch {
	case tooLong:
		dv.TooLong = true
	case !ValidJSON(raw):
		dv.Malformed = true
	default:
		dv.Value = Value{Raw: string(raw)}
	}
	return dv, nil
}

// value consumes one JSON value, keeping its text in d.buf up to max
// bytes; past that it is only scanned. It checks nesting and strings only:
// ValidJSON checks the kept text.
func (d *docReader) value(max int) (raw []byte, tooLong bool, err error) {
	d.buf = d.buf[:0]
	keep := func(b []byte) {
		if tooLong {
			return
		}
		if len(d.buf)+len(b) > max {
			tooLong = true
			d.buf = d.buf[:0]
			return
		}
		d.buf = append(d.buf, b...)
	}
	depth, inString, escaped := 0, false, false
	scalar := false
	for {
		if d.pos >= len(d.chunk) {
			if err := d.fill(); err != nil {
				if errors.Is(err, io.EOF) && scalar {
					return d.buf, tooLong, nil // a scalar may end the input
				}
				return nil, false, err
			}
		}
		s := d.chunk[d.pos:]
		i := 0
		done := false
	scan:
		for i < len(s) {
			c := s[i]
			if inString {
				if escaped {
					escaped = false
					i++
					continue
				}
				// Jump to the next quote or backslash: strings are most of
				// the bytes.
				j := bytes.IndexAny(s[i:], "\"\\")
				if j < 0 {
					i = len(s)
					break
				}
				i += j
				if s[i] == '\\' {
					escaped = true
					i++
					continue
				}
				inString = false
				i++
				if depth == 0 {
					done = true
					break scan
				}
				continue
			}
			if scalar {
				switch c {
				case ',', '}', ']', ' ', '\t', '\r', '\n':
					done = true
					break scan
				}
				i++
				continue
			}
			switch c {
			case '"':
				inString = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth <= 0 {
					i++
					done = true
					break scan
				}
			case ' ', '\t', '\r', '\n', ',', ':':
			default:
				if depth == 0 {
					scalar = true
				}
			}
			i++
		}
		keep(s[:i])
		d.pos += i
		if done {
			return d.buf, tooLong, nil
		}
	}
}
