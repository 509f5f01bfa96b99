package history

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/musterhq/muster/internal/termtext"

	"github.com/musterhq/muster/internal/transcript"
)

// Caps on the text full-text search keeps of each item, and of a session.
// What people said is the point of the search, so prompts and replies keep
// the most; tool outputs (file reads, build logs, diffs) are most of a
// transcript's bytes and mostly repeat what is on disk, so only their head
// (the command's answer, the error) is kept; tool inputs are commands,
// paths and edit strings, short in the main. A session's columns are
// capped too, so that one runaway session cannot bloat the index.
const (
	capSaid       = 16 << 10 // a prompt, reply or thinking block
	capToolInput  = 2 << 10  // a tool call's arguments (string values)
	capToolOutput = 4 << 10  // a tool result
	capColumn     = 2 << 20  // said or tools, per session
)

// doc is a session's full-text search row.
type doc struct {
	meta, said, tools string
}

// searchDoc builds the full-text row of a parsed session.
func searchDoc(t *transcript.Transcript) doc {
	var d docBuilder
	for _, it := range t.Items {
		d.add(it)
	}
	return d.doc(t.Session)
}

// docBuilder folds items into a full-text row one at a time, so that a
// parser streaming its items (transcript.ParseOptions.Item) never has them
// held: the row is capped, the transcript is not.
type docBuilder struct {
	said, tools strings.Builder
}

func (d *docBuilder) add(it transcript.Item) {
	// What a fork starts from was said in its original, whose row finds
	// it: a hit maps to the conversation that said it.
	if it.Inherited {
		return
	}
	switch it.Kind {
	case transcript.UserPrompt, transcript.AssistantText, transcript.Thinking:
		addCapped(&d.said, it.Text, capSaid)
	case transcript.ToolUse:
		addCapped(&d.tools, it.Tool, 64)
		addCapped(&d.tools, inputText(it.Input, capToolInput), capToolInput)
	case transcript.ToolResult:
		addCapped(&d.tools, it.Text, capToolOutput)
	}
}

// reset forgets every item added: they were a fork's inherited history
// (transcript.ParseOptions.Inherit).
func (d *docBuilder) reset() {
	d.said.Reset()
	d.tools.Reset()
}

// clone is a copy of d that adds without changing d.
func (d *docBuilder) clone() *docBuilder {
	c := &docBuilder{}
	c.said.WriteString(d.said.String())
	c.tools.WriteString(d.tools.String())
	return c
}

func (d *docBuilder) doc(s transcript.Session) doc {
	return doc{
		meta:  ftsClean(strings.Join([]string{s.Title, s.FirstPrompt, s.CWD, s.ID, s.Model}, "\n")),
		said:  d.said.String(),
		tools: d.tools.String(),
	}
}

func addCapped(b *strings.Builder, s string, n int) {
	if s == "" || b.Len() >= capColumn {
		return
	}
	s = clip(s, min(n, capColumn-b.Len()))
	b.WriteString(ftsClean(s))
	b.WriteByte('\n')
}

// inputText is the string values of a tool call's JSON arguments, one a
// line, up to about n bytes; keys and punctuation are left out, and JSON
// escapes decoded (a "\n" must not glue itself to the next word).
func inputText(raw json.RawMessage, n int) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return ""
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		if b.Len() >= n {
			return
		}
		switch v := v.(type) {
		case string:
			b.WriteString(clip(v, n-b.Len()))
			b.WriteByte('\n')
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		}
	}
	walk(v)
	return b.String()
}

// clip cuts s to at most n bytes at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ftsClean removes escape sequences and control characters other than
// newline and tab (termtext.Strip): a colored log is searched and shown as
// its text, and the snippet markers (markOpen, markClose) never occur in
// the stored text.
func ftsClean(s string) string { return termtext.Strip(s) }
