package transcript

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Summary text bounds: a title is one short line; a first prompt is kept
// long enough to search but short enough for an index of thousands.
const (
	MaxTitleRunes       = 100
	MaxFirstPromptRunes = 2000
)

// Headline turns a prompt into a title: its first non-blank line with runs
// of white space collapsed, clipped to MaxTitleRunes.
func Headline(prompt string) string {
	for line := range strings.Lines(prompt) {
		if f := strings.Fields(line); len(f) > 0 {
			return Clip(strings.Join(f, " "), MaxTitleRunes)
		}
	}
	return ""
}

// Clip trims s and cuts it to at most n runes, marking a cut with "…".
func Clip(s string, n int) string {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for j := range s {
		if count == n-1 {
			i = j
			break
		}
		count++
	}
	return strings.TrimRightFunc(s[:i], unicode.IsSpace) + "…"
}

// RawObject is raw as a tool call's arguments: a copy when it is one valid
// JSON object, else nil. Transcript scans are lenient (a line with a raw
// control character inside a string is still read), and an Input that is
// not valid JSON fails every later json.Marshal of its transcript.
func RawObject(raw []byte) json.RawMessage {
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil
	}
	return json.RawMessage(bytes.Clone(raw))
}

// RawJSON is raw when it is valid JSON, else nil (see RawObject): for
// arguments kept as the CLI wrote them.
func RawJSON(raw []byte) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return nil
	}
	return json.RawMessage(raw)
}

// RenameKeys returns the JSON object raw with keys renamed old → new, for
// mapping provider tool arguments onto canonical names. A key whose new name
// is already present is kept as is; other valid JSON is returned unchanged,
// and invalid JSON (see RawObject) as nil.
func RenameKeys(raw []byte, renames map[string]string) json.RawMessage {
	if !json.Valid(raw) {
		return nil
	}
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil || obj == nil {
		return json.RawMessage(raw)
	}
	changed := false
	for from, to := range renames {
		v, ok := obj[from]
		if !ok {
			continue
		}
		if _, taken := obj[to]; taken {
			continue
		}
		obj[to] = v
		delete(obj, from)
		changed = true
	}
	if !changed {
		return json.RawMessage(raw)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return json.RawMessage(raw)
	}
	return out
}
