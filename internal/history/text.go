package history

import (
	"encoding/json"
	"hash/maphash"
	"maps"
	"slices"
	"strings"
	"unicode"
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

// A column also stops taking words once it holds about maxColumnWords
// distinct ones. SQLite's FTS5 holds a row's distinct tokens in memory
// while it inserts the row, about 330 bytes each: 2 MB of prompts that
// were all different numbers (175,000 tokens) took the daemon 63 MB
// above its heap for one row (issue 22), however large the transcript.
// Prose and code repeat their words and fill the bytes first. They are
// counted in a bitmap of their hashes (linear counting): wordBits bits,
// full at maxSetBits, which is about 33,000 distinct words.
const (
	wordBits   = 1 << 16
	maxSetBits = wordBits * 2 / 5
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
	said, tools column
}

// column is one text column of a row being built.
type column struct {
	b     strings.Builder
	words []uint64 // the bitmap of its words' hashes, made on first use
	set   int      // bits set in words
}

// wordSeed hashes the words of every column.
var wordSeed = maphash.MakeSeed()

func (d *docBuilder) add(it transcript.Item) {
	// What a fork starts from was said in its original, whose row finds
	// it: a hit maps to the conversation that said it.
	if it.Inherited {
		return
	}
	switch it.Kind {
	case transcript.UserPrompt, transcript.AssistantText, transcript.Thinking:
		d.said.add(it.Text, capSaid)
	case transcript.ToolUse:
		d.tools.add(it.Tool, 64)
		d.tools.add(inputText(it.Input, capToolInput), capToolInput)
	case transcript.ToolResult:
		d.tools.add(it.Text, capToolOutput)
	}
}

// reset forgets every item added: they were a fork's inherited history
// (transcript.ParseOptions.Inherit).
func (d *docBuilder) reset() {
	d.said, d.tools = column{}, column{}
}

// clone is a copy of d that adds without changing d.
func (d *docBuilder) clone() *docBuilder {
	c := &docBuilder{}
	d.said.copyTo(&c.said)
	d.tools.copyTo(&c.tools)
	return c
}

// copyTo makes n, a new column, a copy of c.
func (c *column) copyTo(n *column) {
	n.b.WriteString(c.b.String())
	n.words, n.set = slices.Clone(c.words), c.set
}

func (d *docBuilder) doc(s transcript.Session) doc {
	return doc{
		meta:  ftsClean(strings.Join([]string{s.Title, s.FirstPrompt, s.CWD, s.ID, s.Model}, "\n")),
		said:  d.said.b.String(),
		tools: d.tools.b.String(),
	}
}

// add appends s, cut to n bytes, to the column, and the words it has
// room for.
func (c *column) add(s string, n int) {
	if s == "" || c.b.Len() >= capColumn || c.set >= maxSetBits {
		return
	}
	s = c.countWords(ftsClean(clip(s, min(n, capColumn-c.b.Len()))))
	c.b.WriteString(s)
	c.b.WriteByte('\n')
}

// countWords counts the words of s (as FTS5's unicode61 tokenizer splits
// them, case folded) and returns s up to the word that fills the column.
func (c *column) countWords(s string) string {
	if c.words == nil {
		c.words = make([]uint64, wordBits/64)
	}
	var h maphash.Hash
	h.SetSeed(wordSeed)
	var buf [utf8.UTFMax]byte
	in := false
	for i, r := range s {
		if isTokenRune(r) {
			h.Write(utf8.AppendRune(buf[:0], unicode.ToLower(r)))
			in = true
			continue
		}
		if in && c.word(&h) {
			return s[:i]
		}
		in = false
	}
	if in {
		c.word(&h)
	}
	return s
}

// word counts the word h hashed, resetting h, and reports whether the
// column is full.
func (c *column) word(h *maphash.Hash) bool {
	x := h.Sum64() % wordBits
	h.Reset()
	if bit := uint64(1) << (x % 64); c.words[x/64]&bit == 0 {
		c.words[x/64] |= bit
		c.set++
	}
	return c.set >= maxSetBits
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
