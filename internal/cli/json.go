package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// writeJSON prints v as one indented JSON document. The strings keep
// their text, agents' text included, but nothing in them can act on a
// terminal the output is shown on: encoding/json escapes C0 controls, and
// DEL, the C1 controls (U+0080–U+009F, e.g. U+009B, an 8-bit CSI) and the
// bidirectional overrides are escaped here as \u00XX.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeTerminal(buf.Bytes()))
	return err
}

// escapeTerminal rewrites DEL, C1 and bidi-control runes in encoded JSON
// as \u escapes. Outside strings JSON has none of them, so a rewrite can
// only land inside a string, where the escape means the same rune.
func escapeTerminal(b []byte) []byte {
	i := bytes.IndexFunc(b, needsEscape)
	if i < 0 {
		return b
	}
	out := append(make([]byte, 0, len(b)+16), b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if needsEscape(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

func needsEscape(r rune) bool {
	return r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// writeJSONLine writes v as one line of JSON (NDJSON), escaped as
// writeJSON escapes.
func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(escapeTerminal(append(b, '\n')))
	return err
}
