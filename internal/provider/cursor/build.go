package cursor

import (
	"fmt"
	"strings"

	"github.com/musterhq/muster/internal/transcript"
)

// builder accumulates one conversation, whatever the file format.
type builder struct {
	t      *transcript.Transcript
	full   bool
	sink   func(transcript.Item)
	budget *transcript.ImageBudget
	first  string
	// pending queues the calls whose ids the parser made up, oldest first,
	// for results that carry no call id (legacy text); head is the next.
	// At most maxPending wait: a transcript whose calls are never answered
	// would grow the queue with the file (issue 22), and a result that
	// many calls late answers the oldest one kept.
	pending []string
	head    int
	// open holds the ids in the queue, true once a result naming the id
	// answered it.
	open map[string]bool
	// tools names the latest calls' tools, for their results.
	tools transcript.CallNames
}

// maxPending bounds the calls without ids waiting for a result.
const maxPending = 1 << 12

func newBuilder(path, id string, opts transcript.ParseOptions) *builder {
	b := &builder{
		t:    &transcript.Transcript{Session: transcript.Session{Provider: Name, ID: id, Path: path}},
		full: !opts.SummaryOnly,
		sink: opts.Item,
	}
	if b.full {
		b.budget = transcript.NewImageBudget()
	}
	b.open = map[string]bool{}
	return b
}

func (b *builder) warnf(format string, args ...any) {
	b.t.Warnings = append(b.t.Warnings, fmt.Sprintf(format, args...))
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

// prompt records a user prompt; images only count in summary parses.
func (b *builder) prompt(text string, images []transcript.Image, hasImage bool) {
	text = strings.TrimSpace(text)
	if text == "" && !hasImage {
		return
	}
	b.t.PromptCount++
	if b.first == "" && text != "" {
		b.first = text
	}
	b.add(transcript.Item{Kind: transcript.UserPrompt, Text: text, Images: images})
}

func (b *builder) say(kind transcript.ItemKind, text, model string) {
	if !b.full {
		return
	}
	if text = strings.TrimSpace(text); text != "" {
		b.add(transcript.Item{Kind: kind, Text: text, Model: model})
	}
}

// toolUse records a call; synthetic says id was made up by the parser.
func (b *builder) toolUse(id string, synthetic bool, raw, input, model string) {
	b.t.ToolCallCount++
	if synthetic {
		b.pending = append(b.pending, id)
		b.open[id] = false
		if len(b.pending)-b.head > maxPending {
			b.pop()
		}
	}
	if !b.full {
		return
	}
	name, args := canonical(raw, []byte(input))
	b.tools.Set(id, [2]string{name, raw})
	b.add(transcript.Item{Kind: transcript.ToolUse, CallID: id, Tool: name, RawTool: raw, Input: args, Model: model})
}

// toolResult answers call id; without one, the oldest unanswered call whose
// id the parser made up.
func (b *builder) toolResult(id, text string, isErr bool) {
	if id == "" {
		for b.head < len(b.pending) && b.open[b.pending[b.head]] {
			b.pop()
		}
		if b.head < len(b.pending) {
			id = b.pop()
		}
	} else if _, ok := b.open[id]; ok {
		b.open[id] = true
	}
	if !b.full {
		return
	}
	tool, _ := b.tools.Get(id)
	b.add(transcript.Item{Kind: transcript.ToolResult, CallID: id, Tool: tool[0], RawTool: tool[1], Text: text, IsError: isErr})
}

// pop takes the oldest call off the queue, whose memory is given back
// once half of it is taken.
func (b *builder) pop() string {
	id := b.pending[b.head]
	delete(b.open, id)
	b.head++
	if b.head > 1024 && b.head*2 > len(b.pending) {
		b.pending = append(b.pending[:0], b.pending[b.head:]...)
		b.head = 0
	}
	return id
}

// meta applies a chat store's meta record.
func (b *builder) meta(m storeMeta) { metaInto(b.t, m) }

func metaInto(t *transcript.Transcript, m storeMeta) {
	if m.Name != "" && m.Name != "New Agent" {
		t.Title = transcript.Headline(m.Name)
	}
	if m.LastUsedModel != "" {
		t.Model = m.LastUsedModel
	}
	if m.CreatedAt > 0 {
		t.StartedAt = msTime(m.CreatedAt)
	}
}

func (b *builder) finish() *transcript.Transcript { return b.finishInto(b.t) }

func (b *builder) finishInto(t *transcript.Transcript) *transcript.Transcript {
	t.FirstPrompt = transcript.Clip(b.first, transcript.MaxFirstPromptRunes)
	if t.Title == "" {
		t.Title = transcript.Headline(b.first)
	}
	return t
}

// userQuery extracts the prompt from a Cursor user text: the contents of
// its <user_query> elements, else the text without a leading <timestamp>.
func userQuery(s string) string {
	var parts []string
	rest := s
	for {
		_, after, ok := strings.Cut(rest, "<user_query>")
		if !ok {
			break
		}
		q, tail, closed := strings.Cut(after, "</user_query>")
		parts = append(parts, strings.TrimSpace(q))
		if !closed {
			break
		}
		rest = tail
	}
	if len(parts) > 0 {
		return strings.Join(parts, "\n\n")
	}
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "<timestamp>") {
		if _, after, ok := strings.Cut(t, "</timestamp>"); ok {
			t = strings.TrimSpace(after)
		}
	}
	return t
}
