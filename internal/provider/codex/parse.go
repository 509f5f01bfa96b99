package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// tag says where an item came from, so that copies of the same content
// from different record kinds can be told apart at the end.
type tag uint8

const (
	tagOther tag = iota
	tagUserEvent
	tagUserItem
	tagUserResponse
	tagAsstResponse
	tagAsstEvent
	tagAsstItem
	tagThinkResponse
	tagThinkEvent
	tagCompactRecord
	tagCompactEvent
	numTags
)

// prompt sources, best first.
var promptTags = [...]tag{tagUserEvent, tagUserItem, tagUserResponse}

type promptSource struct {
	count int
	first string
}

// tokens are Codex's cumulative counters; input includes cached and
// cache-write tokens, output includes reasoning.
type tokens struct {
	input, cached, cacheWrite, output, reasoning int64
}

func (a tokens) sub(b tokens) tokens {
	return tokens{a.input - b.input, a.cached - b.cached, a.cacheWrite - b.cacheWrite, a.output - b.output, a.reasoning - b.reasoning}
}

func (a tokens) add(b tokens) tokens {
	return tokens{a.input + b.input, a.cached + b.cached, a.cacheWrite + b.cacheWrite, a.output + b.output, a.reasoning + b.reasoning}
}

func (a tokens) less(b tokens) bool {
	return a.input < b.input || a.cached < b.cached || a.cacheWrite < b.cacheWrite || a.output < b.output || a.reasoning < b.reasoning
}

func (a tokens) usage() transcript.Usage {
	return transcript.Usage{
		Input:      max(0, a.input-a.cached-a.cacheWrite),
		CacheRead:  a.cached,
		CacheWrite: a.cacheWrite,
		Output:     a.output,
		Reasoning:  a.reasoning,
	}
}

// series follows one cumulative counter (token_count totals, or
// token_usage_record thread totals).
type series struct {
	seen bool
	last tokens
	// base is the total a fork's counter starts from: 0.169 forks carry
	// on their original's cumulative totals, which the original counts.
	base    tokens
	byModel map[string]tokens
	// log is each increase with its time: Transcript.UsageLog. Forked
	// threads skip the parent's copied records, so no increase is another
	// file's and none needs a key. noLog: it is not wanted
	// (ParseOptions.NoUsageLog).
	log   []transcript.UsageEntry
	noLog bool
}

// update follows the counter to total. own is the response's own usage
// where the record gives it (last_token_usage, usage): a fork's first total
// less that is what it inherited (the original's total at the fork point).
func (s *series) update(total tokens, own *tokens, fork bool, model string, ts time.Time) {
	if fork && !s.seen && own != nil && !total.less(*own) && total != *own {
		s.base = total.sub(*own)
		s.last, s.seen = s.base, true
	}
	delta := total
	if s.seen && !total.less(s.last) {
		delta = total.sub(s.last)
	}
	s.seen = true
	s.last = total
	if delta == (tokens{}) {
		return
	}
	if model == "" {
		model = "unknown"
	}
	if s.byModel == nil {
		s.byModel = map[string]tokens{}
	}
	s.byModel[model] = s.byModel[model].add(delta)
	if !s.noLog {
		s.log = append(s.log, transcript.UsageEntry{Time: ts, Model: model, Usage: delta.usage()})
	}
}

type parser struct {
	opts transcript.ParseOptions
	t    *transcript.Transcript
	n    int // current line

	meta     SessionMeta
	haveMeta bool
	fork     bool
	// forkedFrom is the original of a fork the user made (codex fork),
	// historyBase where its history ends in the original's rollout
	// (0.169: nothing is copied), and inherit parses what the fork starts
	// from, copied or referenced, for the replay (full parses only).
	forkedFrom  string
	historyBase int64
	inherit     *parser
	depth       int // forks followed to get here
	// baseRead: the original's history was looked for, and baseWarnings
	// say what went wrong; they follow the lines' warnings, as when the
	// history was read after every line.
	baseRead     bool
	baseWarnings []string

	tcCWD     string
	model     string // latest turn_context model
	infoModel string // latest token_count info.model
	lastModel string // latest of either

	items   []transcript.Item
	tags    []tag
	have    [numTags]bool
	prompts [numTags]promptSource
	marks   [numTags][]transcript.CompactionMark

	names transcript.CallNames // call_id → canonical, raw tool name
	usage [2]series            // token_count, token_usage_record

	budget *transcript.ImageBudget

	// flush, when set (a Follow that streams its items), is called once
	// the items held pass maxHeld bytes or maxHeldItems: it hands them
	// over or drops them, so that a parse holds a bounded share of a
	// huge rollout; held counts their bytes.
	flush func()
	held  int

	top, pl []transcript.Member
}

func newParser(path string, opts transcript.ParseOptions) *parser {
	p := &parser{
		opts:   opts,
		t:      &transcript.Transcript{Session: transcript.Session{Provider: Name, Path: path}},
		budget: transcript.NewImageBudget(),
	}
	p.usage[0].noLog, p.usage[1].noLog = opts.NoUsageLog, opts.NoUsageLog
	return p
}

func (p *parser) warnf(line int, format string, args ...any) {
	p.t.Warnings = append(p.t.Warnings, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

func (p *parser) seen(ts time.Time) {
	if ts.IsZero() {
		return
	}
	if p.t.StartedAt.IsZero() || ts.Before(p.t.StartedAt) {
		p.t.StartedAt = ts
	}
	if ts.After(p.t.EndedAt) {
		p.t.EndedAt = ts
	}
}

// Bounds on the items a streaming parse holds before flush; variables so
// that a test can flush after every item.
var (
	maxHeld      = 4 << 20
	maxHeldItems = 4096
)

func (p *parser) add(it transcript.Item, g tag) {
	p.have[g] = true
	if p.opts.SummaryOnly {
		return
	}
	p.items = append(p.items, it)
	p.tags = append(p.tags, g)
	if p.flush == nil {
		return
	}
	p.held += len(it.Text) + len(it.Input) + len(it.Tool) + len(it.RawTool) + len(it.CallID) + len(it.Model) + 256
	for _, img := range it.Images {
		p.held += len(img.DataURL)
	}
	if p.held >= maxHeld || len(p.items) >= maxHeldItems {
		p.flush()
	}
}

func (p *parser) setMeta(m SessionMeta) {
	if p.haveMeta {
		return
	}
	p.haveMeta = true
	p.meta = m
	p.seen(m.StartedAt)
}

// responseItemTypes may appear bare (without an envelope) in the oldest
// rollouts.
var responseItemTypes = map[string]bool{
	"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true, "web_search_call": true,
}

// envelope returns the members of a record's {timestamp, type, payload}
// envelope, for the history parser and the turn reader alike.
func envelope(top []transcript.Member) (typ, payload, ts []byte) {
	for _, m := range top {
		switch string(m.Key) {
		case "type":
			typ = m.Value
		case "payload":
			payload = m.Value
		case "timestamp":
			ts = m.Value
		}
	}
	return typ, payload, ts
}

func (p *parser) line(n int, raw []byte) {
	p.n = n
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return
	}
	var ok bool
	if p.top, ok = transcript.Members(raw, p.top); !ok {
		if transcript.ValidJSON(raw) {
			p.warnf(n, "not a JSON object; skipped")
		} else {
			p.warnf(n, "malformed JSON; skipped")
		}
		return
	}
	typ, payload, tsRaw := envelope(p.top)
	ts := parseTime(tsRaw)
	if payload == nil {
		switch t := transcript.Str(typ); {
		case typ == nil && transcript.IsString(transcript.Lookup(p.top, "id")):
			p.setMeta(metaOnly(metaFrom(p.top, ts))) // legacy header {id, timestamp}
		case responseItemTypes[t]:
			p.seen(ts)
			p.responseItem(p.top, ts)
		}
		return
	}
	typStr := transcript.Str(typ)
	if typStr == "session_meta" {
		if pl, ok := transcript.Members(payload, nil); ok && !p.haveMeta {
			p.setMeta(metaOnly(metaFrom(pl, ts)))
			subagent := p.meta.ParentID != "" || bytes.Contains(transcript.Lookup(pl, "source"), []byte(`"subagent"`))
			from := transcript.Str(transcript.Lookup(pl, "forked_from_id"))
			p.fork = subagent || transcript.Lookup(pl, "forked_from_id") != nil
			if !subagent && from != "" && from != p.meta.ID {
				p.forkedFrom = from
				if hb, ok := transcript.Members(transcript.Lookup(pl, "history_base"), nil); ok &&
					transcript.StrEqual(transcript.Lookup(hb, "thread_id"), from) {
					p.historyBase = transcript.Int(transcript.Lookup(hb, "end_byte_offset"))
				}
			}
		}
		return
	}
	// A forked thread starts with a copy of its parent's records: a
	// sub-agent's are the parent's, nested above it, and skipped; a user's
	// fork replays them as inherited.
	if p.fork && !ts.IsZero() && !p.meta.StartedAt.IsZero() && ts.Before(p.meta.StartedAt) {
		if p.forkedFrom != "" && !p.opts.SummaryOnly {
			p.inherited().line(n, raw)
		}
		return
	}
	if p.pl, ok = transcript.Members(payload, p.pl); !ok {
		return
	}
	p.seen(ts)
	switch typStr {
	case "turn_context":
		if m := transcript.Str(transcript.Lookup(p.pl, "model")); m != "" {
			p.model, p.lastModel = m, m
		}
		if c := transcript.Str(transcript.Lookup(p.pl, "cwd")); c != "" && p.tcCWD == "" {
			p.tcCWD = c
		}
	case "response_item":
		p.responseItem(p.pl, ts)
	case "event_msg":
		p.event(p.pl, ts)
	case "compacted":
		p.compaction(tagCompactRecord, ts)
	case "token_usage_record":
		if t, ok := readTokens(transcript.Lookup(p.pl, "thread_token_usage")); ok {
			p.usage[1].update(t, ownTokens(transcript.Lookup(p.pl, "usage")), p.fork, p.currentModel(), ts)
		}
	}
}

func (p *parser) currentModel() string {
	if p.model != "" {
		return p.model
	}
	return p.infoModel
}

func (p *parser) compaction(g tag, ts time.Time) {
	p.marks[g] = append(p.marks[g], transcript.CompactionMark{Time: ts})
	p.add(transcript.Item{Kind: transcript.Compaction, Time: ts}, g)
}

func (p *parser) responseItem(pl []transcript.Member, ts time.Time) {
	typ := transcript.Str(transcript.Lookup(pl, "type"))
	if typ == "" && transcript.Lookup(pl, "role") != nil {
		typ = "message" // some writers omit the type of messages
	}
	switch typ {
	case "message":
		role := transcript.Str(transcript.Lookup(pl, "role"))
		text, images := contentText(transcript.Lookup(pl, "content"))
		switch role {
		case "user":
			if injected(pl, text) {
				return
			}
			p.prompt(tagUserResponse, text, images, ts)
		case "assistant":
			if strings.TrimSpace(text) != "" {
				p.add(transcript.Item{Kind: transcript.AssistantText, Time: ts, Text: text, Model: p.currentModel()}, tagAsstResponse)
			}
		}
	case "reasoning":
		if p.opts.SummaryOnly {
			return // only the replay needs reasoning
		}
		var parts []string
		for _, key := range []string{"summary", "content"} {
			els, _ := transcript.Elements(transcript.Lookup(pl, key), nil)
			for _, el := range els {
				ms, _ := transcript.Members(el, nil)
				if s := transcript.Str(transcript.Lookup(ms, "text")); strings.TrimSpace(s) != "" {
					parts = append(parts, s)
				}
			}
		}
		if len(parts) > 0 {
			p.add(transcript.Item{Kind: transcript.Thinking, Time: ts, Text: strings.Join(parts, "\n\n"), Model: p.currentModel()}, tagThinkResponse)
		}
	case "function_call":
		p.toolCall(pl, "", func() []byte {
			args := transcript.Lookup(pl, "arguments")
			if transcript.IsString(args) {
				return []byte(transcript.Str(args)) // arguments as a JSON string
			}
			return args
		}, ts)
	case "custom_tool_call":
		p.toolCall(pl, "", func() []byte {
			input, _ := json.Marshal(map[string]string{"input": transcript.Str(transcript.Lookup(pl, "input"))})
			return input
		}, ts)
	case "local_shell_call":
		p.toolCall(pl, "local_shell", func() []byte { return transcript.Lookup(pl, "action") }, ts)
	case "web_search_call":
		p.toolCall(pl, "web_search", func() []byte { return transcript.Lookup(pl, "action") }, ts)
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		p.toolResult(pl, ts)
	}
}

func (p *parser) event(pl []transcript.Member, ts time.Time) {
	switch transcript.Str(transcript.Lookup(pl, "type")) {
	case "user_message":
		var images []string
		els, _ := transcript.Elements(transcript.Lookup(pl, "images"), nil)
		for _, el := range els {
			if s := transcript.Str(el); s != "" {
				images = append(images, s)
			}
		}
		p.prompt(tagUserEvent, transcript.Str(transcript.Lookup(pl, "message")), images, ts)
	case "agent_message":
		if s := transcript.Str(transcript.Lookup(pl, "message")); strings.TrimSpace(s) != "" {
			p.add(transcript.Item{Kind: transcript.AssistantText, Time: ts, Text: s, Model: p.currentModel()}, tagAsstEvent)
		}
	case "agent_reasoning":
		if s := transcript.Str(transcript.Lookup(pl, "text")); strings.TrimSpace(s) != "" {
			p.add(transcript.Item{Kind: transcript.Thinking, Time: ts, Text: s, Model: p.currentModel()}, tagThinkEvent)
		}
	case "item_completed":
		item, ok := transcript.Members(transcript.Lookup(pl, "item"), nil)
		if !ok {
			return
		}
		text, _ := contentText(transcript.Lookup(item, "content"))
		switch transcript.Str(transcript.Lookup(item, "type")) {
		case "UserMessage":
			p.prompt(tagUserItem, text, nil, ts)
		case "AgentMessage":
			if strings.TrimSpace(text) != "" {
				p.add(transcript.Item{Kind: transcript.AssistantText, Time: ts, Text: text, Model: p.currentModel()}, tagAsstItem)
			}
		}
	case "token_count":
		info, ok := transcript.Members(transcript.Lookup(pl, "info"), nil)
		if !ok {
			return // info is null before the first response
		}
		if m := transcript.Str(transcript.Lookup(info, "model")); m != "" {
			p.infoModel, p.lastModel = m, m
		}
		if t, ok := readTokens(transcript.Lookup(info, "total_token_usage")); ok {
			model := p.model
			if m := transcript.Str(transcript.Lookup(info, "model")); m != "" {
				model = m
			}
			p.usage[0].update(t, ownTokens(transcript.Lookup(info, "last_token_usage")), p.fork, model, ts)
		}
	case "context_compacted":
		p.compaction(tagCompactEvent, ts)
	}
}

func (p *parser) prompt(g tag, text string, images []string, ts time.Time) {
	if strings.TrimSpace(text) == "" {
		if len(images) == 0 {
			return
		}
		text = "(image)"
	}
	src := &p.prompts[g]
	src.count++
	if src.first == "" {
		src.first = transcript.Clip(text, transcript.MaxFirstPromptRunes)
	}
	if p.opts.SummaryOnly {
		p.have[g] = true
		return
	}
	it := transcript.Item{Kind: transcript.UserPrompt, Time: ts, Text: text}
	for _, url := range images {
		if img, ok := p.image(url); ok {
			it.Images = append(it.Images, img)
		}
	}
	p.add(it, g)
}

// image embeds a data URL image within the parse's budget.
func (p *parser) image(url string) (transcript.Image, bool) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return transcript.Image{}, false // a remote or local reference: not embedded
	}
	meta, data, ok := strings.Cut(rest, ",")
	mt, isBase64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isBase64 {
		p.warnf(p.n, "image not embedded: not a base64 data URL")
		return transcript.Image{}, false
	}
	mt, ok = transcript.ImageMIME(mt)
	if !ok || !base64Text(data) {
		p.warnf(p.n, "image not embedded: not a raster image in base64")
		return transcript.Image{}, false
	}
	if err := p.budget.Take(int64(len(data)) / 4 * 3); err != nil {
		p.warnf(p.n, "image not embedded: %v", err)
		return transcript.Image{}, false
	}
	return transcript.Image{MIME: mt, DataURL: "data:" + mt + ";base64," + data}, true
}

func base64Text(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// toolCall counts a call and, for the replay, adds it with its arguments;
// name overrides the payload's name (for call items that have none).
func (p *parser) toolCall(pl []transcript.Member, name string, args func() []byte, ts time.Time) {
	p.t.ToolCallCount++
	if p.opts.SummaryOnly {
		return
	}
	if name == "" {
		name = transcript.Str(transcript.Lookup(pl, "name"))
	}
	callID := transcript.Str(transcript.Lookup(pl, "call_id"))
	if callID == "" {
		callID = transcript.Str(transcript.Lookup(pl, "id"))
	}
	tool, input := NormalizeTool(name, args())
	if callID != "" {
		p.names.Set(callID, [2]string{tool, name})
	}
	p.add(transcript.Item{Kind: transcript.ToolUse, Time: ts, CallID: callID, Tool: tool, RawTool: name, Input: input, Model: p.currentModel()}, tagOther)
}

func (p *parser) toolResult(pl []transcript.Member, ts time.Time) {
	if p.opts.SummaryOnly {
		return
	}
	id := transcript.Str(transcript.Lookup(pl, "call_id"))
	text, isErr := outputText(transcript.Lookup(pl, "output"))
	if s := transcript.Lookup(pl, "success"); string(s) == "false" {
		isErr = true
	}
	it := transcript.Item{Kind: transcript.ToolResult, Time: ts, CallID: id, Text: text, IsError: isErr}
	if names, ok := p.names.Get(id); ok {
		it.Tool, it.RawTool = names[0], names[1]
	}
	p.add(it, tagOther)
}

var exitCodeRE = regexp.MustCompile(`(?m)^(?:Process exited with code|Exit code:) (-?\d+)`)

// mayHaveExitCode reports whether s holds one of exitCodeRE's markers: the
// regexp backtracks from every line start, 79 % of a rollout's parse
// when its outputs are kilobytes of build log that name no exit code.
func mayHaveExitCode(s string) bool {
	return strings.Contains(s, "Process exited with code") || strings.Contains(s, "Exit code:")
}

// outputText renders a tool output and says whether it reports failure.
func outputText(raw []byte) (string, bool) {
	switch {
	case transcript.IsString(raw):
		s := transcript.Str(raw)
		trimmed := strings.TrimSpace(s)
		// Older builds wrapped output as a JSON string {"output", "metadata"}.
		if strings.HasPrefix(trimmed, "{") {
			if ms, ok := transcript.Members([]byte(trimmed), nil); ok {
				if out := transcript.Lookup(ms, "output"); transcript.IsString(out) {
					text := transcript.Str(out)
					md, _ := transcript.Members(transcript.Lookup(ms, "metadata"), nil)
					if code := transcript.Lookup(md, "exit_code"); code != nil {
						return text, transcript.Int(code) != 0
					}
					return text, false
				}
			}
		}
		if mayHaveExitCode(s) {
			if m := exitCodeRE.FindStringSubmatch(s); m != nil {
				if code, err := strconv.Atoi(m[1]); err == nil && code != 0 {
					return s, true
				}
			}
		}
		return s, strings.HasSuffix(trimmed, "aborted by user")
	case len(raw) > 0 && raw[0] == '{':
		ms, _ := transcript.Members(raw, nil)
		text := transcript.Str(transcript.Lookup(ms, "content"))
		if text == "" {
			text = transcript.Str(transcript.Lookup(ms, "output"))
		}
		return text, string(transcript.Lookup(ms, "success")) == "false"
	case len(raw) > 0 && raw[0] == '[':
		text, _ := contentText(raw)
		return text, false
	}
	return "", false
}

// contentText joins the text parts of a content array (input_text,
// output_text, text, Text) and collects input_image data URLs.
func contentText(raw []byte) (string, []string) {
	if transcript.IsString(raw) {
		return transcript.Str(raw), nil
	}
	els, ok := transcript.Elements(raw, nil)
	if !ok {
		return "", nil
	}
	var texts, images []string
	for _, el := range els {
		ms, ok := transcript.Members(el, nil)
		if !ok {
			continue
		}
		switch transcript.Str(transcript.Lookup(ms, "type")) {
		case "input_text", "output_text", "text", "Text":
			if s := transcript.Str(transcript.Lookup(ms, "text")); s != "" {
				texts = append(texts, s)
			}
		case "input_image":
			if s := transcript.Str(transcript.Lookup(ms, "image_url")); s != "" {
				images = append(images, s)
			}
		}
	}
	return strings.Join(texts, "\n"), images
}

// injectedPrefixes start user messages the harness wrote, not the user.
var injectedPrefixes = []string{
	"<environment_context>", "<user_instructions>", "<turn_aborted>", "# AGENTS.md instructions",
	"<permissions instructions>", "<INSTRUCTIONS>", "<user_shell_command>", "<skill>",
	"<subagent_notification>", "<collaboration_mode>",
}

// injected reports whether a response_item user message was written by the
// harness rather than typed.
func injected(pl []transcript.Member, text string) bool {
	if md := transcript.Lookup(pl, "internal_chat_message_metadata_passthrough"); md != nil &&
		bytes.Contains(md, []byte(`"provenance":{"type":"harness"`)) {
		return true
	}
	trimmed := strings.TrimSpace(text)
	for _, p := range injectedPrefixes {
		if strings.HasPrefix(trimmed, p) {
			return true
		}
	}
	// A message that is one <tag>…</tag> block is context, not a prompt.
	if rest, ok := strings.CutPrefix(trimmed, "<"); ok {
		if name, _, ok := strings.Cut(rest, ">"); ok && name != "" && !strings.ContainsAny(name, " </") && strings.HasSuffix(trimmed, "</"+name+">") {
			return true
		}
	}
	return false
}

func readTokens(raw []byte) (tokens, bool) {
	ms, ok := transcript.Members(raw, nil)
	if !ok {
		return tokens{}, false
	}
	var t tokens
	for _, m := range ms {
		switch string(m.Key) {
		case "input_tokens":
			t.input = transcript.Int(m.Value)
		case "cached_input_tokens":
			t.cached = transcript.Int(m.Value)
		case "cache_write_input_tokens":
			t.cacheWrite = transcript.Int(m.Value)
		case "output_tokens":
			t.output = transcript.Int(m.Value)
		case "reasoning_output_tokens":
			t.reasoning = transcript.Int(m.Value)
		}
	}
	return t, true
}

var uuidSuffixRE = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// keepSet says which tags' items a parse keeps: of copies of the same
// content from different record kinds, the best source present. It is
// decided late, from every record read; Follow re-reads a file when a
// record changes it after items were handed over.
type keepSet struct {
	keep   [numTags]bool
	prompt tag // the prompt source, tagOther when none
}

func (p *parser) keepSet() keepSet {
	var k keepSet
	k.prompt = tagOther
	for _, g := range promptTags {
		if p.prompts[g].count > 0 {
			k.prompt = g
			break
		}
	}
	k.keep[tagOther], k.keep[k.prompt] = true, true
	for _, group := range [][]tag{
		{tagAsstResponse, tagAsstEvent, tagAsstItem},
		{tagThinkResponse, tagThinkEvent},
		{tagCompactRecord, tagCompactEvent},
	} {
		for _, g := range group {
			if p.have[g] {
				k.keep[g] = true
				break
			}
		}
	}
	return k
}

// kept is the items of p.items that k keeps, in order.
func (p *parser) kept(k keepSet) []transcript.Item {
	var out []transcript.Item
	for i, it := range p.items {
		if k.keep[p.tags[i]] {
			out = append(out, it)
		}
	}
	return out
}

// finish is the parse so far, with the items kept, what the inherited
// history (a fork's) first. It leaves p as it was, so that more lines
// can be parsed after it (Follow).
func (p *parser) finish() *transcript.Transcript { return p.result(true) }

// result is finish; withItems false leaves the transcript's Items (and
// its inherited history) out.
func (p *parser) result(withItems bool) *transcript.Transcript {
	t := &transcript.Transcript{Session: p.t.Session}
	t.Warnings = slices.Concat(p.t.Warnings, p.baseWarnings)
	k := p.keepSet()
	if k.prompt != tagOther {
		t.PromptCount = p.prompts[k.prompt].count
		t.FirstPrompt = p.prompts[k.prompt].first
	}
	for _, g := range []tag{tagCompactRecord, tagCompactEvent} {
		if k.keep[g] {
			t.Compactions = slices.Clone(p.marks[g])
		}
	}
	if !p.shows() {
		return nil
	}
	used := p.usedSeries()
	if withItems && !p.opts.SummaryOnly {
		t.Items = p.kept(k)
	}
	if used != nil {
		u := used.last.sub(used.base).usage()
		t.Usage = &u
		t.UsageByModel = map[string]transcript.Usage{}
		for m, tok := range used.byModel {
			t.UsageByModel[m] = tok.usage()
		}
		t.UsageLog = slices.Clone(used.log)
	}
	t.ID = p.meta.ID
	if t.ID == "" {
		base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(t.Path), ".jsonl"), ".json")
		if id := uuidSuffixRE.FindString(base); id != "" {
			t.ID = id
		} else {
			t.ID = base
		}
	}
	t.CWD = p.meta.CWD
	if t.CWD == "" {
		t.CWD = p.tcCWD
	}
	t.ParentID = p.meta.ParentID
	t.ForkedFrom = p.forkedFrom
	if withItems {
		if inh := p.inheritedItems(); len(inh) > 0 {
			t.Items = append(inh, t.Items...)
		}
	}
	t.Model = p.lastModel
	t.Title = transcript.Headline(t.FirstPrompt)
	return t
}

// shows reports whether the parse has something to show: a prompt, a
// tool call, a reply or usage; result is nil otherwise.
func (p *parser) shows() bool {
	for _, g := range promptTags {
		if p.prompts[g].count > 0 {
			return true
		}
	}
	return p.t.ToolCallCount > 0 || p.have[tagAsstResponse] || p.have[tagAsstEvent] || p.have[tagAsstItem] || p.usedSeries() != nil
}

// usedSeries is the token counter the parse reports, nil when none.
func (p *parser) usedSeries() *series {
	for i := range p.usage {
		if p.usage[i].seen {
			return &p.usage[i]
		}
	}
	return nil
}

// inheritedItems is the items of what a fork starts from, marked
// inherited.
func (p *parser) inheritedItems() []transcript.Item {
	if p.inherit == nil {
		return nil
	}
	it := p.inherit.finish()
	if it == nil {
		return nil
	}
	for i := range it.Items {
		it.Items[i].Inherited = true
	}
	return it.Items
}

// shells whose "-c"/"-lc" argv carries a script.
var shells = map[string]bool{"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "fish": true}

// JoinArgv renders an argv as one shell command: the script of
// [bash -lc script], otherwise the words, shell-quoted where needed.
func JoinArgv(argv []string) string {
	if len(argv) == 3 && shells[filepath.Base(argv[0])] && (argv[1] == "-lc" || argv[1] == "-c") {
		return argv[2]
	}
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = shellQuote(a)
	}
	return strings.Join(words, " ")
}

var safeWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(s string) string {
	if safeWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// canonicalTools are the Codex tools with a canonical name.
var canonicalTools = map[string]string{
	"shell": transcript.ToolBash, "container.exec": transcript.ToolBash, "shell_command": transcript.ToolBash,
	"exec_command": transcript.ToolBash, "local_shell": transcript.ToolBash,
	"apply_patch": transcript.ToolApplyPatch, "read_file": transcript.ToolRead, "list_dir": transcript.ToolLS,
	"grep_files": transcript.ToolGrep, "web_search": transcript.ToolWebSearch, "spawn_agent": transcript.ToolTask,
}

// NormalizeTool maps a Codex tool call (its name and JSON arguments) onto
// the canonical name and argument names; see the package doc.
func NormalizeTool(name string, args []byte) (string, json.RawMessage) {
	args = bytes.TrimSpace(args)
	var obj map[string]json.RawMessage
	if len(args) > 0 && args[0] == '{' {
		if json.Unmarshal(args, &obj) != nil {
			obj = nil
		}
	}
	raw := func() json.RawMessage {
		if len(args) == 0 || !json.Valid(args) {
			// Arguments that are not JSON would fail every json.Marshal
			// of the transcript (transcript.RawObject).
			return nil
		}
		return json.RawMessage(bytes.Clone(args))
	}
	if obj == nil {
		canon, ok := canonicalTools[name]
		if !ok {
			return name, raw()
		}
		// A bare patch string as arguments.
		if s := strings.TrimSpace(string(args)); canon == transcript.ToolApplyPatch && s != "" && !strings.HasPrefix(s, "[") {
			b, _ := json.Marshal(map[string]string{"patch": string(args)})
			return canon, b
		}
		return canon, raw()
	}
	rename := func(renames map[string]string) json.RawMessage {
		b, _ := json.Marshal(obj)
		return transcript.RenameKeys(b, renames)
	}
	setCommand := func(key string) {
		v, ok := obj[key]
		if !ok {
			return
		}
		delete(obj, key)
		var argv []string
		var s string
		switch {
		case json.Unmarshal(v, &argv) == nil:
			s = JoinArgv(argv)
		case json.Unmarshal(v, &s) == nil:
		default:
			obj["command"] = v
			return
		}
		obj["command"], _ = json.Marshal(s)
	}
	switch name {
	case "shell", "container.exec", "shell_command":
		setCommand("command")
		return transcript.ToolBash, rename(nil)
	case "exec_command":
		if _, ok := obj["command"]; !ok {
			setCommand("cmd")
		} else {
			setCommand("command")
		}
		return transcript.ToolBash, rename(map[string]string{"justification": "description"})
	case "local_shell": // a local_shell_call's action {type, command, working_directory}
		setCommand("command")
		delete(obj, "type")
		return transcript.ToolBash, rename(map[string]string{"working_directory": "workdir"})
	case "apply_patch":
		for _, k := range []string{"input", "patch"} {
			if v, ok := obj[k]; ok {
				var s string
				if json.Unmarshal(v, &s) == nil {
					b, _ := json.Marshal(map[string]string{"patch": s})
					return transcript.ToolApplyPatch, b
				}
			}
		}
		return transcript.ToolApplyPatch, raw()
	case "read_file":
		return transcript.ToolRead, rename(map[string]string{"path": "file_path"})
	case "list_dir":
		return transcript.ToolLS, rename(map[string]string{"dir_path": "path"})
	case "grep_files":
		return transcript.ToolGrep, raw()
	case "web_search":
		delete(obj, "type")
		return transcript.ToolWebSearch, rename(nil)
	case "spawn_agent":
		return transcript.ToolTask, raw()
	}
	return name, raw()
}

func parseTime(raw []byte) time.Time {
	if !transcript.IsString(raw) {
		return time.Time{}
	}
	ts, err := time.Parse(time.RFC3339Nano, transcript.Str(raw))
	if err != nil {
		return time.Time{}
	}
	return ts.UTC()
}

// ownTokens reads a response's own usage, nil when the record has none.
func ownTokens(raw []byte) *tokens {
	if t, ok := readTokens(raw); ok {
		return &t
	}
	return nil
}

// maxForkDepth bounds how many originals a fork's replay follows (a fork
// of a fork…), so that a cycle of forked_from_id cannot loop.
const maxForkDepth = 8

// inherited is the parser of what a fork starts from.
func (p *parser) inherited() *parser {
	if p.inherit == nil {
		p.inherit = newParser(p.t.Path, p.opts)
		p.inherit.depth = p.depth + 1
		p.inherit.flush = p.flush
	}
	return p.inherit
}

// chain is p and the parsers of what it inherits, p first.
func (p *parser) chain() []*parser {
	var c []*parser
	for q := p; q != nil; q = q.inherit {
		c = append(c, q)
	}
	return c
}

// readHistoryBase parses the original's records a 0.169 fork points at
// (history_base: the first end_byte_offset bytes of the original's
// rollout, found next to the fork's) as inherited; scanRollout calls it
// once session_meta is read, so that the original's items come before
// the fork's own. A missing original is a warning: the fork replays from
// its own first record.
func (p *parser) readHistoryBase(ctx context.Context) error {
	if p.historyBase <= 0 || p.opts.SummaryOnly || p.inherit != nil || p.depth >= maxForkDepth {
		return nil
	}
	path := originalRollout(p.t.Path, p.forkedFrom)
	if path == "" {
		p.baseWarnings = append(p.baseWarnings, fmt.Sprintf("forked from %s, whose rollout is not found: its history before the fork is not shown", p.forkedFrom))
		return nil
	}
	f, err := transcript.OpenFile(path)
	if err != nil {
		p.baseWarnings = append(p.baseWarnings, fmt.Sprintf("forked from %s: %v", p.forkedFrom, err))
		return nil
	}
	defer f.Close()
	q := p.inherited()
	q.t.Path = path
	var lines int
	_, err = scanRollout(ctx, q, io.LimitReader(f, p.historyBase), &lines, true)
	return err
}

// originalRollout finds the rollout of session id in the Codex home that
// holds path (…/sessions/… or …/archived_sessions/…), "" when none does.
func originalRollout(path, id string) string {
	dir := filepath.Dir(path)
	for range 5 {
		switch filepath.Base(dir) {
		case "sessions", "archived_sessions":
			home := filepath.Dir(dir)
			for _, sub := range []string{"sessions", "archived_sessions"} {
				if p, _ := findRollout(filepath.Join(home, sub), id, 0); p != "" {
					return p
				}
			}
			return ""
		}
		dir = filepath.Dir(dir)
	}
	return ""
}
