package opencode

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// info is a session's metadata, from a session row, a legacy session file or
// an export's info.
type info struct {
	id, parentID, directory, title, modelID string
	created, updated                        int64 // ms
}

// placeholderTitle matches the titles OpenCode gives a session before it
// has named it.
var placeholderTitle = regexp.MustCompile(`^(New session|Child session) - \d{4}-\d{2}-\d{2}T`)

// builder turns one session's messages into a transcript.
type builder struct {
	t       *transcript.Transcript
	full    bool
	sink    func(transcript.Item)
	budget  *transcript.ImageBudget
	first   string
	cwd     string
	usage   transcript.Usage
	byModel map[string]transcript.Usage
	sawUse  bool
	last    time.Time
	// compacted is set by a compaction part until the summary message
	// that answers it, so one compaction is marked once.
	compacted bool
}

func newBuilder(path string, in info, opts transcript.ParseOptions) *builder {
	b := &builder{
		t: &transcript.Transcript{Session: transcript.Session{
			Provider:  Name,
			ID:        in.id,
			Path:      path,
			CWD:       in.directory,
			ParentID:  in.parentID,
			Model:     in.modelID,
			StartedAt: msTime(in.created),
		}},
		full:    !opts.SummaryOnly,
		sink:    opts.Item,
		byModel: map[string]transcript.Usage{},
		last:    msTime(in.updated),
	}
	if b.full {
		b.budget = transcript.NewImageBudget()
	}
	if in.title != "" && !placeholderTitle.MatchString(in.title) {
		b.t.Title = transcript.Headline(in.title)
	}
	return b
}

// item adds an item to the transcript, or hands it to the caller's sink.
func (b *builder) item(it transcript.Item) {
	if b.sink != nil {
		b.sink(it)
		return
	}
	b.t.Items = append(b.t.Items, it)
}

func (b *builder) warnf(format string, args ...any) {
	b.t.Warnings = append(b.t.Warnings, fmt.Sprintf(format, args...))
}

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// message accumulates one message's parts before it is added.
type message struct {
	id, role, model string
	session         string
	created         time.Time
	summary         bool // an assistant compaction summary
	items           []transcript.Item
	texts           []string // user: non-synthetic text parts
	synthetic       []string // user: synthetic (runtime-injected) text parts
	images          []transcript.Image
	hasImage        bool
	tools           int
	steps           transcript.Usage
	sawStep         bool
	stepCost        float64
	compaction      *transcript.CompactionMark
	tokens          transcript.Value
	cost            transcript.Value
	cwd             string
	completed       time.Time
}

// newMessage reads message.data (or an export's message info).
func newMessage(id string, data transcript.Value) *message {
	m := &message{id: id}
	data.ForEach(func(k string, v transcript.Value) bool {
		switch k {
		case "id":
			if m.id == "" {
				m.id = v.String()
			}
		case "role":
			m.role = v.Str()
		case "time":
			m.created = msTime(v.Get("created").Int())
			m.completed = msTime(v.Get("completed").Int())
		case "modelID":
			m.model = v.Str()
		case "summary":
			m.summary = v.IsTrue()
		case "tokens":
			m.tokens = v
		case "cost":
			m.cost = v
		case "path":
			m.cwd = v.Get("cwd").Str()
		}
		return true
	})
	return m
}

// part converts one part of m; id is the part's id (the row id in the
// database, where data omits it).
func (b *builder) part(m *message, id string, p transcript.Value) {
	typ := p.Get("type").Str()
	switch typ {
	case "text":
		text := p.Get("text").Str()
		if m.role == "user" {
			if p.Get("synthetic").IsTrue() || p.Get("ignored").IsTrue() {
				if strings.TrimSpace(text) != "" {
					m.synthetic = append(m.synthetic, text)
				}
				return
			}
			if strings.TrimSpace(text) != "" {
				m.texts = append(m.texts, text)
			}
			return
		}
		if b.full && !m.summary {
			if s := strings.TrimSpace(text); s != "" {
				m.items = append(m.items, transcript.Item{Kind: transcript.AssistantText, Time: partTime(p, m), Text: s, Model: m.model})
			}
		}
	case "reasoning":
		if b.full && !m.summary {
			if s := strings.TrimSpace(p.Get("text").Str()); s != "" {
				m.items = append(m.items, transcript.Item{Kind: transcript.Thinking, Time: partTime(p, m), Text: s, Model: m.model})
			}
		}
	case "tool":
		m.tools++
		if b.full {
			b.tool(m, id, p)
		}
	case "file":
		mt, ok := transcript.ImageMIME(p.Get("mime").Str())
		if !ok || m.role != "user" {
			return
		}
		url := p.Get("url").Str()
		rest, isData := strings.CutPrefix(url, "data:")
		if !isData {
			return // a file:// reference: never read
		}
		m.hasImage = true
		if !b.full {
			return
		}
		_, payload, ok := strings.Cut(rest, ";base64,")
		if !ok {
			b.warnf("message %s: image %q is not a base64 data URL", m.id, p.Get("filename").Str())
			return
		}
		data, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			b.warnf("message %s: image %q is not valid base64", m.id, p.Get("filename").Str())
			return
		}
		if err := b.budget.Take(int64(len(data))); err != nil {
			b.warnf("message %s: %v", m.id, err)
			return
		}
		m.images = append(m.images, transcript.Image{MIME: mt, DataURL: transcript.DataURL(mt, data), Path: p.Get("filename").Str()})
	case "step-finish":
		m.sawStep = true
		m.steps.Add(usageOf(p.Get("tokens")))
		m.stepCost += p.Get("cost").Float()
	case "compaction":
		trigger := "manual"
		if p.Get("auto").IsTrue() {
			trigger = "auto"
		}
		m.compaction = &transcript.CompactionMark{ID: id, Trigger: trigger, Time: m.created}
	}
}

func partTime(p transcript.Value, m *message) time.Time {
	if t := msTime(p.Get("time.start").Int()); !t.IsZero() {
		return t
	}
	return m.created
}

func (b *builder) tool(m *message, partID string, p transcript.Value) {
	raw := p.Get("tool").Str()
	id := p.Get("callID").String()
	if id == "" {
		id = partID
	}
	state := p.Get("state")
	var input []byte
	if in := state.Get("input"); in.IsObject() {
		input = []byte(in.Raw)
	}
	name, args := canonical(raw, input)
	start, end := msTime(state.Get("time.start").Int()), msTime(state.Get("time.end").Int())
	if start.IsZero() {
		start = m.created
	}
	m.items = append(m.items, transcript.Item{Kind: transcript.ToolUse, Time: start, CallID: id, Tool: name, RawTool: raw, Input: args, Model: m.model})
	res := transcript.Item{Kind: transcript.ToolResult, Time: end, CallID: id, Tool: name, RawTool: raw}
	switch state.Get("status").Str() {
	case "completed":
		res.Text = valueText(state.Get("output"))
	case "error":
		res.Text, res.IsError = valueText(state.Get("error")), true
	default:
		return // pending or running: no result yet
	}
	m.items = append(m.items, res)
}

func valueText(v transcript.Value) string {
	if v.IsString() {
		return v.Str()
	}
	if !v.Exists() || v.IsNull() {
		return ""
	}
	return v.Raw
}

// usageOf reads OpenCode's tokens object: input excludes the cache, output
// excludes reasoning.
func usageOf(tok transcript.Value) transcript.Usage {
	reasoning := tok.Get("reasoning").Int()
	return transcript.Usage{
		Input:      tok.Get("input").Int(),
		Output:     tok.Get("output").Int() + reasoning,
		CacheRead:  tok.Get("cache.read").Int(),
		CacheWrite: tok.Get("cache.write").Int(),
		Reasoning:  reasoning,
	}
}

// add appends a finished message to the transcript.
func (b *builder) add(m *message) {
	if b.t.CWD == "" && m.cwd != "" {
		b.cwd = m.cwd
	}
	if t := m.completed; t.After(b.last) {
		b.last = t
	}
	if m.created.After(b.last) {
		b.last = m.created
	}
	if m.compaction != nil {
		b.compacted = true
		b.t.Compactions = append(b.t.Compactions, *m.compaction)
		if b.full {
			b.item(transcript.Item{Kind: transcript.Compaction, Time: m.created, Text: "context compacted (" + m.compaction.Trigger + ")"})
		}
	}
	switch m.role {
	case "user":
		b.user(m)
	case "assistant":
		b.assistant(m)
	}
}

func (b *builder) user(m *message) {
	text := strings.TrimSpace(strings.Join(m.texts, "\n"))
	directive := false
	switch {
	case text != "" || m.hasImage:
	case len(m.synthetic) > 0:
		directive = true
		text = strings.TrimSpace(strings.Join(m.synthetic, "\n"))
	default:
		return
	}
	b.t.PromptCount++
	if !directive && b.first == "" && text != "" {
		b.first = text
	}
	if !b.full {
		return
	}
	it := transcript.Item{Kind: transcript.UserPrompt, Time: m.created, Text: text, Images: m.images, Directive: directive}
	if directive {
		it.Source = "synthetic"
	}
	b.item(it)
}

func (b *builder) assistant(m *message) {
	if m.model != "" {
		b.t.Model = m.model
	}
	if m.summary && b.compacted {
		b.compacted = false
	} else if m.summary {
		mark := transcript.CompactionMark{ID: m.id, Trigger: "summary", Time: m.created}
		b.t.Compactions = append(b.t.Compactions, mark)
		if b.full {
			b.item(transcript.Item{Kind: transcript.Compaction, Time: m.created, Text: "context compacted"})
		}
	}
	b.t.ToolCallCount += m.tools
	for _, it := range m.items {
		b.item(it)
	}
	if m.cost.Exists() {
		b.t.CostUSD += m.cost.Float()
	} else {
		b.t.CostUSD += m.stepCost
	}
	var u transcript.Usage
	switch {
	case m.sawStep:
		u = m.steps
	case m.tokens.IsObject():
		u = usageOf(m.tokens)
	default:
		return
	}
	b.sawUse = true
	b.usage.Add(u)
	mu := b.byModel[m.model]
	mu.Add(u)
	b.byModel[m.model] = mu
}

// finish completes the session.
func (b *builder) finish() *transcript.Transcript {
	t := b.t
	if t.CWD == "" {
		t.CWD = b.cwd
	}
	if b.last.After(t.EndedAt) {
		t.EndedAt = b.last
	}
	if b.sawUse {
		u := b.usage
		t.Usage = &u
		t.UsageByModel = b.byModel
	}
	t.FirstPrompt = transcript.Clip(b.first, transcript.MaxFirstPromptRunes)
	if t.Title == "" {
		t.Title = transcript.Headline(b.first)
	}
	return t
}
