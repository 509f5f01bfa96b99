package gemini

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// conversation is the state a chat file describes once every record has
// been applied. Messages stay raw (substrings of the file) until build.
type conversation struct {
	sessionID, projectHash, kind string
	startTime, lastUpdated       string
	summary                      string
	directories                  []string
	msgs                         []transcript.Value
	index                        map[string]int // message id → position in msgs
	warnings                     []string
	// settled is how many of the first messages a Follow has built and
	// dropped (their msgs entries are empty); touched says a record
	// changed one of them since, so that the Follow must read the file
	// again. A whole parse settles nothing.
	settled int
	touched bool
}

// maxRecord bounds one record (a JSONL line, a message of a single-document
// chat): a longer one is skipped with a warning rather than held. A
// variable for tests.
var maxRecord = transcript.DefaultMaxLine

// read parses a chat file as a stream. legacyExt says the name ends in
// .json, where a single document is expected; a .jsonl whose first line is
// not a JSON value is read as one document too. A single document's
// messages are converted as they are read (into opts.Item when set), so
// neither the file nor its messages are ever held whole; a JSONL log
// keeps each message's latest record until the end, as later records
// update and rewind them.
func read(f io.ReadSeeker, path string, legacyExt bool, opts transcript.ParseOptions) (t *transcript.Transcript, projectHash string) {
	c := &conversation{index: map[string]int{}}
	defer func() { projectHash = c.projectHash }()
	document := legacyExt
	if !document {
		sc := transcript.NewLineScanner(f, maxRecord)
		for sc.Scan() {
			if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 || sc.TooLong() {
				document = !sc.TooLong() && !transcript.ValidJSON(l)
				break
			}
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			c.warnf("read: %v", err)
			return c.finish(newBuilder(path, opts)), ""
		}
	}
	if document {
		b := newBuilder(path, opts)
		passed := 0
		err := transcript.WalkObject(f, maxRecord, map[string]bool{"messages": true}, func(v transcript.DocValue) bool {
			passed++
			switch {
			case v.Index < 0:
				if v.Value.Exists() {
					c.metaMember(v.Key, v.Value)
					b.sessionID = c.sessionID
				}
			case v.TooLong:
				c.warnf("message %d: over %d bytes; skipped", v.Index+1, maxRecord)
			case v.Malformed || !v.Value.IsObject():
				c.warnf("message %d: not a JSON object", v.Index+1)
			default:
				b.message(v.Value)
			}
			return true
		})
		if err == nil || passed > 0 {
			if err != nil {
				c.warnf("%v", err)
			}
			return c.finish(b), ""
		}
		// Not a document after all: read it as lines, as the CLI would.
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			c.warnf("read: %v", err)
			return c.finish(b), ""
		}
	}
	sc := transcript.NewLineScanner(f, maxRecord)
	for sc.Scan() {
		c.line(sc.Line(), sc.Bytes(), sc.TooLong())
	}
	if err := sc.Err(); err != nil {
		c.warnf("read: %v", err)
	}
	b := newBuilder(path, opts)
	b.sessionID = c.sessionID
	for _, raw := range c.msgs {
		b.message(raw)
	}
	return c.finish(b), ""
}

// line applies line n of a JSONL log; tooLong: it was over maxRecord.
func (c *conversation) line(n int, raw []byte, tooLong bool) {
	if tooLong || len(raw) > maxRecord {
		c.warnf("line %d: over %d bytes; skipped", n, maxRecord)
		return
	}
	l := bytes.TrimSpace(raw)
	if len(l) == 0 {
		return
	}
	if !transcript.ValidJSON(l) {
		c.warnf("line %d: malformed JSON", n)
		return
	}
	// The scanner reuses its buffer; a kept message needs its own copy.
	v := transcript.Parse(string(l))
	if !v.IsObject() {
		c.warnf("line %d: not a JSON object", n)
		return
	}
	c.apply(v)
}

func (c *conversation) warnf(format string, args ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, args...))
}

// apply applies one record, in the order the CLI's loader tests them.
func (c *conversation) apply(v transcript.Value) {
	var id, typ, rewind, set, msgs transcript.Value
	snapshot := false
	v.ForEach(func(k string, val transcript.Value) bool {
		switch k {
		case "id":
			id = val
		case "type":
			typ = val
		case "$rewindTo":
			rewind = val
		case "$set":
			set = val
		case "$snapshot":
			snapshot = val.IsTrue()
		case "messages":
			msgs = val
		}
		return true
	})
	switch {
	case snapshot && msgs.IsArray():
		if len(msgs.Array()) > 0 {
			c.replace(msgs)
		}
	case rewind.IsString():
		c.rewind(rewind.Str())
	case id.IsString() && typ.Exists():
		c.upsert(id.Str(), v)
	case set.IsObject():
		c.meta(set)
	case v.Get("sessionId").IsString():
		c.meta(v)
	}
}

// meta merges metadata fields; a messages array replaces the list.
func (c *conversation) meta(v transcript.Value) {
	v.ForEach(func(k string, val transcript.Value) bool {
		c.metaMember(k, val)
		return true
	})
}

// metaMember merges one metadata field.
func (c *conversation) metaMember(k string, val transcript.Value) {
	if k == "messages" {
		if val.IsArray() {
			c.replace(val)
		}
		return
	}
	if k == "directories" && val.IsArray() {
		c.directories = c.directories[:0]
		val.ForEach(func(_ string, d transcript.Value) bool {
			if d.IsString() && d.Str() != "" {
				c.directories = append(c.directories, d.Str())
			}
			return true
		})
		return
	}
	if !val.IsString() {
		return
	}
	switch k {
	case "sessionId":
		c.sessionID = val.Str()
	case "projectHash":
		c.projectHash = val.Str()
	case "startTime":
		c.startTime = val.Str()
	case "lastUpdated":
		c.lastUpdated = val.Str()
	case "summary":
		c.summary = val.Str()
	case "kind":
		c.kind = val.Str()
	}
}

func (c *conversation) upsert(id string, v transcript.Value) {
	if i, ok := c.index[id]; ok {
		c.touched = c.touched || i < c.settled
		c.msgs[i] = v
		return
	}
	c.index[id] = len(c.msgs)
	c.msgs = append(c.msgs, v)
}

func (c *conversation) replace(arr transcript.Value) {
	c.touched = c.touched || c.settled > 0
	c.msgs = c.msgs[:0]
	clear(c.index)
	arr.ForEach(func(_ string, m transcript.Value) bool {
		if !m.IsObject() {
			return true
		}
		if id := m.Get("id"); id.IsString() {
			c.upsert(id.Str(), m)
		} else {
			c.msgs = append(c.msgs, m)
		}
		return true
	})
}

func (c *conversation) rewind(id string) {
	i, ok := c.index[id]
	if !ok {
		i = 0
	}
	if i < c.settled {
		c.touched = true
		i = c.settled // the Follow reads the file again
	}
	for _, m := range c.msgs[i:] {
		if mid := m.Get("id"); mid.IsString() {
			delete(c.index, mid.Str())
		}
	}
	c.msgs = c.msgs[:i]
}

// message is the part of a message record build reads.
type message struct {
	id, typ, model                     string
	ts                                 time.Time
	content, display, toolCalls, notes transcript.Value // notes = thoughts
	tokens                             transcript.Value
}

func decodeMessage(m transcript.Value) message {
	var msg message
	m.ForEach(func(k string, v transcript.Value) bool {
		switch k {
		case "id":
			msg.id = v.String()
		case "type":
			msg.typ = v.Str()
		case "timestamp":
			msg.ts = parseTime(v.Str())
		case "content":
			msg.content = v
		case "displayContent":
			msg.display = v
		case "toolCalls":
			msg.toolCalls = v
		case "thoughts":
			msg.notes = v
		case "tokens":
			msg.tokens = v
		case "model":
			msg.model = v.Str()
		}
		return true
	})
	return msg
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// builder accumulates a session while messages are converted.
type builder struct {
	t       *transcript.Transcript
	full    bool
	sink    func(transcript.Item)
	budget  *transcript.ImageBudget
	first   string
	usage   transcript.Usage
	byModel map[string]transcript.Usage
	sawUse  bool
	// sessionID is the recorded session id, the scope of message ids.
	sessionID string
	last      time.Time
	// workdir is the first workspace directory the injected
	// <session_context> names, a last resort for the cwd.
	workdir string
}

func (b *builder) add(it transcript.Item) {
	switch {
	case !b.full:
	case b.sink != nil:
		b.sink(it)
	default:
		b.t.Items = append(b.t.Items, it)
	}
}

func newBuilder(path string, opts transcript.ParseOptions) *builder {
	t := &transcript.Transcript{Session: transcript.Session{Provider: Name, Path: path}}
	b := &builder{t: t, full: !opts.SummaryOnly, sink: opts.Item, byModel: map[string]transcript.Usage{}}
	if b.full {
		b.budget = transcript.NewImageBudget()
	}
	return b
}

// message converts one message record.
func (b *builder) message(raw transcript.Value) {
	t := b.t
	m := decodeMessage(raw)
	if !m.ts.IsZero() {
		if t.StartedAt.IsZero() {
			t.StartedAt = m.ts
		}
		if m.ts.After(b.last) {
			b.last = m.ts
		}
	}
	switch m.typ {
	case "user", "user_shell":
		b.user(m)
	case "gemini":
		b.gemini(m)
	}
}

// finish completes the transcript with what the conversation's metadata
// says.
func (c *conversation) finish(b *builder) *transcript.Transcript {
	t := b.t
	t.ID = c.sessionID
	t.Warnings = append(c.warnings, t.Warnings...)
	if t.ID == "" {
		t.ID = strings.TrimSuffix(filepath.Base(t.Path), filepath.Ext(t.Path))
	}
	if c.kind == "subagent" {
		if parent := filepath.Base(filepath.Dir(t.Path)); parent != "chats" {
			t.ParentID = parent
		}
	}
	if st := parseTime(c.startTime); !st.IsZero() {
		t.StartedAt = st
	}
	t.EndedAt = b.last
	if lu := parseTime(c.lastUpdated); lu.After(t.EndedAt) {
		t.EndedAt = lu
	}
	if b.sawUse {
		u := b.usage
		t.Usage = &u
		t.UsageByModel = b.byModel
	}
	t.FirstPrompt = transcript.Clip(b.first, transcript.MaxFirstPromptRunes)
	if len(c.directories) > 0 {
		t.CWD = c.directories[0]
	} else {
		t.CWD = b.workdir
	}
	if c.summary != "" {
		t.Title = transcript.Headline(c.summary)
	} else {
		t.Title = transcript.Headline(b.first)
	}
	return t
}

func (b *builder) user(m message) {
	text := partsText(m.content)
	if m.display.Exists() {
		if d := partsText(m.display); strings.TrimSpace(d) != "" {
			text = d
		}
	}
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "<session_context>") {
		if b.workdir == "" {
			b.workdir = contextDir(text)
		}
		return
	}
	var images []transcript.Image
	hasImage := false
	forParts(m.content, func(p transcript.Value) {
		d := p.Get("inlineData")
		if !d.IsObject() {
			return
		}
		mt, ok := transcript.ImageMIME(d.Get("mimeType").Str())
		if !ok {
			return
		}
		hasImage = true
		if !b.full {
			return
		}
		data, err := base64.StdEncoding.DecodeString(d.Get("data").Str())
		if err != nil {
			b.t.Warnings = append(b.t.Warnings, fmt.Sprintf("message %s: image is not valid base64", m.id))
			return
		}
		if err := b.budget.Take(int64(len(data))); err != nil {
			b.t.Warnings = append(b.t.Warnings, fmt.Sprintf("message %s: %v", m.id, err))
			return
		}
		images = append(images, transcript.Image{MIME: mt, DataURL: transcript.DataURL(mt, data)})
	})
	if text == "" && !hasImage {
		return // tool responses echoed back, or an empty message
	}
	b.t.PromptCount++
	if b.first == "" && text != "" {
		b.first = text
	}
	it := transcript.Item{Kind: transcript.UserPrompt, Time: m.ts, Text: text, Images: images}
	if m.typ == "user_shell" {
		it.Source = "shell"
	}
	b.add(it)
}

func (b *builder) gemini(m message) {
	if m.model != "" {
		b.t.Model = m.model
	}
	if b.full {
		m.notes.ForEach(func(_ string, th transcript.Value) bool {
			text := strings.TrimSpace(strings.TrimSpace(th.Get("subject").String()) + "\n" + strings.TrimSpace(th.Get("description").String()))
			if text != "" {
				b.add(transcript.Item{Kind: transcript.Thinking, Time: parseTime(th.Get("timestamp").Str()), Text: text, Model: m.model})
			}
			return true
		})
		var thought, said strings.Builder
		if m.content.IsString() {
			said.WriteString(m.content.Str())
		} else {
			forParts(m.content, func(p transcript.Value) {
				if tx := p.Get("text"); tx.IsString() {
					if p.Get("thought").IsTrue() {
						thought.WriteString(tx.Str())
					} else {
						said.WriteString(tx.Str())
					}
				}
			})
		}
		if s := strings.TrimSpace(thought.String()); s != "" {
			b.add(transcript.Item{Kind: transcript.Thinking, Time: m.ts, Text: s, Model: m.model})
		}
		if s := strings.TrimSpace(said.String()); s != "" {
			b.add(transcript.Item{Kind: transcript.AssistantText, Time: m.ts, Text: s, Model: m.model})
		}
	}
	i := 0
	m.toolCalls.ForEach(func(_ string, tc transcript.Value) bool {
		if !tc.IsObject() {
			return true
		}
		b.t.ToolCallCount++
		if b.full {
			b.toolCall(m, i, tc)
		}
		i++
		return true
	})
	if m.tokens.IsObject() {
		b.sawUse = true
		u := usageOf(m.tokens)
		b.usage.Add(u)
		key := m.model
		mu := b.byModel[key]
		mu.Add(u)
		b.byModel[key] = mu
		// Resuming writes a new chat file with the same session id that
		// starts with the messages so far, ids unchanged (real-cli
		// REPORT.md): the id within the session makes them count once.
		var id string
		if m.id != "" && b.sessionID != "" {
			id = b.sessionID + ":" + m.id
		}
		b.t.UsageLog = append(b.t.UsageLog, transcript.UsageEntry{Key: id, Time: m.ts, Model: m.model, Usage: u})
	}
}

func usageOf(tok transcript.Value) transcript.Usage {
	in := tok.Get("input").Int()
	cached := tok.Get("cached").Int()
	thoughts := tok.Get("thoughts").Int()
	return transcript.Usage{
		Input:     max(in-cached, 0) + tok.Get("tool").Int(),
		Output:    tok.Get("output").Int() + thoughts,
		CacheRead: cached,
		Reasoning: thoughts,
	}
}

func (b *builder) toolCall(m message, i int, tc transcript.Value) {
	id := tc.Get("id").String()
	if id == "" {
		id = fmt.Sprintf("%s#%d", m.id, i)
	}
	raw := tc.Get("name").String()
	args := tc.Get("args")
	var input []byte
	if args.IsObject() {
		input = []byte(args.Raw)
	}
	name, renamed := canonical(raw, input)
	ts := m.ts
	b.add(transcript.Item{Kind: transcript.ToolUse, Time: ts, CallID: id, Tool: name, RawTool: raw, Input: renamed, Model: m.model})

	status := tc.Get("status").Str()
	text, isErr, ok := resultText(tc.Get("result"))
	if status == "error" || status == "cancelled" {
		isErr = true
	}
	if text == "" {
		if d := tc.Get("resultDisplay"); d.IsString() {
			text = d.Str()
		}
	}
	if text == "" && status == "cancelled" {
		text = "cancelled"
	}
	if !ok && !isErr && text == "" {
		return
	}
	b.add(transcript.Item{Kind: transcript.ToolResult, Time: parseTime(tc.Get("timestamp").Str()), CallID: id, Tool: name, RawTool: raw, Text: text, IsError: isErr})
}

// resultText flattens a PartListUnion tool result; ok reports whether there
// was a result at all.
func resultText(r transcript.Value) (text string, isErr, ok bool) {
	if !r.Exists() || r.IsNull() {
		return "", false, false
	}
	if r.IsString() {
		return unwrap(r.Str()), false, true
	}
	var sb strings.Builder
	forParts(r, func(p transcript.Value) {
		if fr := p.Get("functionResponse"); fr.IsObject() {
			resp := fr.Get("response")
			switch {
			case resp.Get("output").IsString():
				sb.WriteString(resp.Get("output").Str())
			case resp.Get("error").Exists():
				isErr = true
				sb.WriteString(resp.Get("error").String())
			case resp.IsString():
				sb.WriteString(resp.Str())
			case resp.Exists():
				sb.WriteString(resp.Raw)
			}
			return
		}
		if tx := p.Get("text"); tx.IsString() {
			sb.WriteString(tx.Str())
			return
		}
		if d := p.Get("inlineData"); d.IsObject() {
			fmt.Fprintf(&sb, "(%s data)", d.Get("mimeType").Str())
		}
	})
	return unwrap(sb.String()), isErr, true
}

// unwrap drops the <untrusted_context> envelope 0.61.0 puts around tool
// output.
func unwrap(s string) string {
	t := strings.TrimSpace(s)
	if in, ok := strings.CutPrefix(t, "<untrusted_context>"); ok {
		if in, ok = strings.CutSuffix(in, "</untrusted_context>"); ok {
			return strings.Trim(in, "\n")
		}
	}
	return s
}

// forParts calls f for each part of a PartListUnion (a part, or an array of
// parts; strings are handled by the callers).
func forParts(v transcript.Value, f func(transcript.Value)) {
	switch {
	case v.IsArray():
		v.ForEach(func(_ string, p transcript.Value) bool {
			if p.IsObject() {
				f(p)
			}
			return true
		})
	case v.IsObject():
		f(v)
	}
}

// partsText joins the text of a PartListUnion as the CLI does, without a
// separator; functionResponse and thought parts carry no prompt text.
func partsText(v transcript.Value) string {
	if v.IsString() {
		return v.Str()
	}
	var sb strings.Builder
	visit := func(p transcript.Value) {
		if p.IsString() {
			sb.WriteString(p.Str())
			return
		}
		if p.Get("functionResponse").Exists() || p.Get("thought").IsTrue() {
			return
		}
		if tx := p.Get("text"); tx.IsString() {
			sb.WriteString(tx.Str())
		}
	}
	switch {
	case v.IsArray():
		v.ForEach(func(_ string, p transcript.Value) bool { visit(p); return true })
	case v.IsObject():
		visit(v)
	}
	return sb.String()
}

// contextDir finds the first workspace directory in the context block the
// CLI injects ("- **Workspace Directories:**" list, or the older "I'm
// currently working in the directory: …" line).
func contextDir(ctx string) string {
	if _, rest, ok := strings.Cut(ctx, "Workspace Directories:**"); ok {
		for line := range strings.Lines(rest) {
			l := strings.TrimSpace(line)
			if l == "" {
				continue
			}
			if d, ok := strings.CutPrefix(l, "- "); ok {
				return strings.TrimSpace(d)
			}
			return ""
		}
	}
	if _, rest, ok := strings.Cut(ctx, "working in the directory:"); ok {
		line, _, _ := strings.Cut(rest, "\n")
		return strings.TrimSpace(line)
	}
	return ""
}
