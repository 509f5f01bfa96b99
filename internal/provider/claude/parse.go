package claude

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// handled are the record types the parser reads; a line that starts with
// another type is skipped cheaply.
var handled = map[string]bool{
	"user": true, "assistant": true, "system": true,
	"summary": true, "custom-title": true, "ai-title": true,
}

type parser struct {
	env  transcript.Env
	opts transcript.ParseOptions
	t    *transcript.Transcript

	subagent  bool
	agentID   string
	recordSID string // first sessionId seen in the records

	// base is the file's name without .jsonl; baseUUID says it is a
	// session id, which then names the session (id).
	base     string
	baseUUID bool

	// forkedFrom is the last requestSessionId of a record that is not the
	// file's own session, and inherited the number of items up to that
	// record: what --fork-session copied (see forked).
	forkedFrom string
	inherited  int
	// prompts and tool calls up to there: a fork counts only its own.
	inheritedPrompts, inheritedTools int
	// items counts the items made, streamed to opts.Item or kept.
	items int
	// forgotten is how many of the first items streamed opts.Inherit
	// told opts.Item to forget (Parse).
	forgotten int
	// replay is how many of the first items are streamed marked
	// Inherited: a stream read again once its fork point is known.
	replay int

	customTitle, aiTitle, summary string

	toolIDs    transcript.IDSet     // tool_use ids seen
	usageKeys  transcript.IDSet     // message.id:requestId counted
	names      transcript.CallNames // tool_use id → canonical, raw name
	usage      transcript.Usage
	byModel    map[string]transcript.Usage
	hasUsage   bool
	assistantN int // assistant records with content or usage
	budget     *transcript.ImageBudget

	// parents are the uuids that some record already continues: a prompt
	// continuing one of them again is a rewind.
	parents transcript.IDSet
	rewind  bool // the current record continues such a uuid

	dec decoder
	// scratch slices reused across lines
	msg, blk []transcript.Member
	els      [][]byte
}

func newParser(env transcript.Env, path string, opts transcript.ParseOptions) *parser {
	p := &parser{
		env:    env,
		opts:   opts,
		t:      &transcript.Transcript{Session: transcript.Session{Provider: Name, Path: path}},
		budget: transcript.NewImageBudget(),
	}
	p.base = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	p.baseUUID = uuidRE.MatchString(p.base)
	if agentID, parentID, ok := subagentInfo(path); ok {
		p.subagent = true
		p.agentID = agentID
		p.t.ParentID = parentID
	}
	return p
}

func (p *parser) warnf(line int, format string, args ...any) {
	p.t.Warnings = append(p.t.Warnings, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

// leadingType returns X when the line starts with {"type":"X".
func leadingType(raw []byte) (string, bool) {
	const prefix = `{"type":"`
	if !bytes.HasPrefix(raw, []byte(prefix)) {
		return "", false
	}
	rest := raw[len(prefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// record holds the top-level fields of one line that the history parser
// and the turn reader use; values are raw JSON aliasing the line.
type record struct {
	typ, subtype, timestamp  []byte
	cwd, sessionID, agentID  []byte
	requestID, uuid          []byte
	requestSessionID         []byte
	parentUUID               []byte
	summary, customTitle     []byte
	aiTitle, message, origin []byte
	compactMeta, promptID    []byte
	isMeta, isCompactSummary bool
	isSidechain, isAPIError  bool
}

// lineStatus says what decode made of a line.
type lineStatus uint8

const (
	lineRecord    lineStatus = iota // r holds the record
	lineSkipped                     // a record type no reader reads, not parsed
	lineNotObject                   // not a JSON object
)

// decoder reads the records of a transcript, one line at a time, for both
// the history parser and the turn reader; its scratch is reused.
type decoder struct {
	top []transcript.Member
}

// decode reads one trimmed, non-empty line into r. Lines of record types
// that no reader reads are skipped by their leading type without parsing
// (api-request records run to hundreds of kilobytes).
func (d *decoder) decode(raw []byte, r *record) lineStatus {
	if typ, ok := leadingType(raw); ok && !handled[typ] {
		return lineSkipped
	}
	var ok bool
	if d.top, ok = transcript.Members(raw, d.top); !ok {
		return lineNotObject
	}
	*r = record{}
	for _, m := range d.top {
		switch string(m.Key) {
		case "type":
			r.typ = m.Value
		case "subtype":
			r.subtype = m.Value
		case "timestamp":
			r.timestamp = m.Value
		case "cwd":
			r.cwd = m.Value
		case "sessionId":
			r.sessionID = m.Value
		case "agentId":
			r.agentID = m.Value
		case "requestId":
			r.requestID = m.Value
		case "requestSessionId":
			r.requestSessionID = m.Value
		case "uuid":
			r.uuid = m.Value
		case "parentUuid":
			r.parentUUID = m.Value
		case "summary":
			r.summary = m.Value
		case "customTitle":
			r.customTitle = m.Value
		case "aiTitle":
			r.aiTitle = m.Value
		case "message":
			r.message = m.Value
		case "compactMetadata":
			r.compactMeta = m.Value
		case "origin":
			r.origin = m.Value
		case "promptId":
			r.promptID = m.Value
		case "isMeta":
			r.isMeta = transcript.Bool(m.Value)
		case "isCompactSummary":
			r.isCompactSummary = transcript.Bool(m.Value)
		case "isSidechain":
			r.isSidechain = transcript.Bool(m.Value)
		case "isApiErrorMessage":
			r.isAPIError = transcript.Bool(m.Value)
		}
	}
	return lineRecord
}

func (p *parser) line(n int, raw []byte) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return
	}
	var r record
	switch p.dec.decode(raw, &r) {
	case lineSkipped:
		if raw[len(raw)-1] != '}' {
			p.warnf(n, "malformed JSON; skipped")
		}
		return
	case lineNotObject:
		if transcript.ValidJSON(raw) {
			p.warnf(n, "not a JSON object; skipped")
		} else {
			p.warnf(n, "malformed JSON; skipped")
		}
		return
	}
	typ := transcript.Str(r.typ)
	switch typ {
	case "summary":
		if s := strings.TrimSpace(transcript.Str(r.summary)); s != "" {
			p.summary = s
		}
		return
	case "custom-title":
		if s := strings.TrimSpace(transcript.Str(r.customTitle)); s != "" {
			p.customTitle = s
		}
		return
	case "ai-title":
		if s := strings.TrimSpace(transcript.Str(r.aiTitle)); s != "" {
			p.aiTitle = s
		}
		return
	case "user", "assistant", "system":
	case "":
		// ccusage fixtures carry usage-only assistant lines with no type.
		if r.typ != nil && !transcript.IsString(r.typ) {
			return
		}
		msg, ok := transcript.Members(r.message, nil)
		if !ok || !transcript.StrEqual(transcript.Lookup(msg, "role"), "assistant") {
			return
		}
		typ = "assistant"
	default:
		return
	}
	ts := parseTime(r.timestamp)
	p.seen(ts)
	if p.t.CWD == "" {
		p.t.CWD = transcript.Str(r.cwd)
	}
	if p.recordSID == "" {
		p.recordSID = transcript.Str(r.sessionID)
	}
	if p.subagent && p.agentID == "" {
		p.agentID = transcript.Str(r.agentID)
	}
	// Old builds inlined sub-agent turns in the main file: they are not the
	// user's turns, but their tokens were spent.
	inlined := r.isSidechain && !p.subagent
	p.rewind = false
	if !inlined && !p.opts.SummaryOnly {
		if pu := transcript.Str(r.parentUUID); pu != "" {
			p.rewind = !p.parents.Add(pu)
		}
	}
	switch typ {
	case "user":
		if !inlined {
			p.user(n, &r, ts)
		}
	case "assistant":
		p.assistant(&r, ts, inlined)
		if rs := transcript.Str(r.requestSessionID); rs != "" && !inlined && rs != transcript.Str(r.sessionID) {
			p.forkedFrom, p.inherited = rs, p.items
			p.inheritedPrompts, p.inheritedTools = p.t.PromptCount, p.t.ToolCallCount
			// Only what finish would mark is forgotten: a record naming
			// the file's own session as its original makes no fork.
			if k := p.inheritedItems(); k > p.forgotten && p.opts.Item != nil && p.opts.Inherit != nil {
				p.opts.Inherit()
				p.forgotten = k
			}
		}
	case "system":
		if transcript.StrEqual(r.subtype, "compact_boundary") && !inlined {
			var trigger string
			if cm, ok := transcript.Members(r.compactMeta, nil); ok {
				trigger = transcript.Str(transcript.Lookup(cm, "trigger"))
			}
			mark := transcript.CompactionMark{ID: transcript.Str(r.uuid), Trigger: trigger, Time: ts}
			p.t.Compactions = append(p.t.Compactions, mark)
			p.add(transcript.Item{Kind: transcript.Compaction, Time: ts, Source: mark.Trigger})
		}
	}
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

func (p *parser) add(it transcript.Item) {
	switch {
	case p.opts.SummaryOnly:
	case p.opts.Item != nil:
		if p.items < p.replay {
			it.Inherited = true
		}
		p.opts.Item(it)
		p.items++
	default:
		p.t.Items = append(p.t.Items, it)
		p.items++
	}
}

// blockType returns the members of a content block and its type.
func (p *parser) block(raw []byte) ([]transcript.Member, []byte, bool) {
	var ok bool
	if p.blk, ok = transcript.Members(raw, p.blk); !ok {
		return nil, nil, false
	}
	return p.blk, transcript.Lookup(p.blk, "type"), true
}

// user handles a user record: tool results, then the prompt if any.
func (p *parser) user(n int, r *record, ts time.Time) {
	if r.isMeta || r.isCompactSummary {
		return
	}
	msg, ok := transcript.Members(r.message, p.msg)
	p.msg = msg
	if !ok {
		return
	}
	content := transcript.Lookup(msg, "content")
	var texts []string
	var images [][]byte
	switch {
	case transcript.IsString(content):
		texts = append(texts, transcript.Str(content))
	case len(content) > 0 && content[0] == '[':
		var ok bool
		if p.els, ok = transcript.Elements(content, p.els); !ok {
			return
		}
		for _, el := range p.els {
			b, typ, ok := p.block(el)
			if !ok {
				continue
			}
			switch {
			case transcript.StrEqual(typ, "text"):
				if s := transcript.Str(transcript.Lookup(b, "text")); s != "" {
					texts = append(texts, s)
				}
			case transcript.StrEqual(typ, "image"):
				images = append(images, el)
			case transcript.StrEqual(typ, "tool_result"):
				p.toolResult(b, ts)
			}
		}
	default:
		return
	}
	text := strings.Join(texts, "\n")
	if strings.TrimSpace(text) == "" {
		if len(images) == 0 {
			return
		}
		text = "(image)"
	}
	kind, shown := classify(text)
	if kind == notPrompt {
		return
	}
	var originKind string
	if om, ok := transcript.Members(r.origin, nil); ok {
		originKind = transcript.Str(transcript.Lookup(om, "kind"))
	}
	directive := kind == directivePrompt || (originKind != "" && originKind != "human")
	p.t.PromptCount++
	if !directive && p.t.FirstPrompt == "" {
		p.t.FirstPrompt = transcript.Clip(shown, transcript.MaxFirstPromptRunes)
	}
	if p.opts.SummaryOnly {
		return
	}
	it := transcript.Item{Kind: transcript.UserPrompt, Time: ts, Text: shown, Directive: directive, Rewind: p.rewind}
	if originKind != "" {
		it.Source = "origin:" + originKind
	}
	for _, b := range images {
		if img, ok := p.image(n, b); ok {
			it.Images = append(it.Images, img)
		}
	}
	p.add(it)
}

func (p *parser) toolResult(b []transcript.Member, ts time.Time) {
	if p.opts.SummaryOnly {
		return
	}
	id := transcript.Str(transcript.Lookup(b, "tool_use_id"))
	it := transcript.Item{Kind: transcript.ToolResult, Time: ts, CallID: id, IsError: transcript.Bool(transcript.Lookup(b, "is_error"))}
	c := transcript.Lookup(b, "content")
	switch {
	case transcript.IsString(c):
		it.Text = transcript.Str(c)
	case len(c) > 0 && c[0] == '[':
		var parts []string
		els, _ := transcript.Elements(c, nil)
		for _, el := range els {
			x, ok := transcript.Members(el, nil)
			if !ok {
				continue
			}
			switch typ := transcript.Lookup(x, "type"); {
			case transcript.StrEqual(typ, "text"):
				parts = append(parts, transcript.Str(transcript.Lookup(x, "text")))
			case transcript.StrEqual(typ, "image"):
				parts = append(parts, "(image)")
			}
		}
		it.Text = strings.Join(parts, "\n")
	}
	if names, ok := p.names.Get(id); ok {
		it.Tool, it.RawTool = names[0], names[1]
	}
	p.add(it)
}

// image embeds one base64 image block of a user message.
func (p *parser) image(n int, raw []byte) (transcript.Image, bool) {
	b, ok := transcript.Members(raw, nil)
	if !ok {
		return transcript.Image{}, false
	}
	src, ok := transcript.Members(transcript.Lookup(b, "source"), nil)
	if !ok || !transcript.StrEqual(transcript.Lookup(src, "type"), "base64") {
		return transcript.Image{}, false
	}
	declared := transcript.Str(transcript.Lookup(src, "media_type"))
	mt, ok := transcript.ImageMIME(declared)
	if !ok {
		p.warnf(n, "image of type %q not embedded", declared)
		return transcript.Image{}, false
	}
	data := transcript.Str(transcript.Lookup(src, "data"))
	if data == "" || !isBase64(data) {
		p.warnf(n, "image not embedded: data is not base64")
		return transcript.Image{}, false
	}
	size := int64(len(data)) / 4 * 3
	if err := p.budget.Take(size); err != nil {
		p.warnf(n, "image not embedded: %v", err)
		return transcript.Image{}, false
	}
	return transcript.Image{MIME: mt, DataURL: "data:" + mt + ";base64," + data}, true
}

func (p *parser) assistant(r *record, ts time.Time, inlined bool) {
	msg, ok := transcript.Members(r.message, p.msg)
	p.msg = msg
	if !ok {
		return
	}
	var id, model, content, usage []byte
	for _, m := range msg {
		switch string(m.Key) {
		case "id":
			id = m.Value
		case "model":
			model = m.Value
		case "content":
			content = m.Value
		case "usage":
			usage = m.Value
		}
	}
	modelName := transcript.Str(model)
	synthetic := modelName == "<synthetic>"
	hasUsage := len(usage) > 0 && usage[0] == '{'
	if hasUsage && !synthetic {
		p.addUsage(id, r.requestID, modelName, usage, ts)
	}
	if inlined {
		return
	}
	if !synthetic && modelName != "" {
		p.t.Model = modelName
	}
	isArray := len(content) > 0 && content[0] == '['
	if isArray || hasUsage {
		p.assistantN++
	}
	if !isArray {
		return
	}
	if p.els, ok = transcript.Elements(content, p.els); !ok {
		return
	}
	itemModel := ""
	if !synthetic {
		itemModel = p.t.Model
	}
	for _, el := range p.els {
		b, typ, ok := p.block(el)
		if !ok {
			continue
		}
		switch {
		case transcript.StrEqual(typ, "text"):
			if p.opts.SummaryOnly {
				continue
			}
			if s := transcript.Str(transcript.Lookup(b, "text")); strings.TrimSpace(s) != "" {
				p.add(transcript.Item{Kind: transcript.AssistantText, Time: ts, Text: s, Model: itemModel})
			}
		case transcript.StrEqual(typ, "thinking"):
			if p.opts.SummaryOnly {
				continue
			}
			if s := transcript.Str(transcript.Lookup(b, "thinking")); strings.TrimSpace(s) != "" {
				p.add(transcript.Item{Kind: transcript.Thinking, Time: ts, Text: s, Model: itemModel})
			}
		case transcript.StrEqual(typ, "tool_use"), transcript.StrEqual(typ, "server_tool_use"):
			callID := transcript.Str(transcript.Lookup(b, "id"))
			if callID != "" {
				if !p.toolIDs.Add(callID) {
					continue
				}
			}
			p.t.ToolCallCount++
			if p.opts.SummaryOnly {
				continue
			}
			raw := transcript.Str(transcript.Lookup(b, "name"))
			tool := NormalizeTool(raw)
			if callID != "" {
				p.names.Set(callID, [2]string{tool, raw})
			}
			input := transcript.RawObject(transcript.Lookup(b, "input"))
			p.add(transcript.Item{Kind: transcript.ToolUse, Time: ts, CallID: callID, Tool: tool, RawTool: raw, Input: input, Model: itemModel})
		}
	}
}

func (p *parser) addUsage(rawID, rawRequestID []byte, model string, usage []byte, ts time.Time) {
	key := ""
	if transcript.IsString(rawID) && transcript.IsString(rawRequestID) && len(rawID) > 2 && len(rawRequestID) > 2 {
		key = string(rawID) + ":" + string(rawRequestID)
		if !p.usageKeys.Add(key) {
			return
		}
	}
	ms, ok := transcript.Members(usage, p.blk)
	p.blk = ms
	if !ok {
		return
	}
	var x transcript.Usage
	for _, m := range ms {
		switch string(m.Key) {
		case "input_tokens":
			x.Input = transcript.Int(m.Value)
		case "output_tokens":
			x.Output = transcript.Int(m.Value)
		case "cache_read_input_tokens":
			x.CacheRead = transcript.Int(m.Value)
		case "cache_creation_input_tokens":
			x.CacheWrite = transcript.Int(m.Value)
		case "output_tokens_details":
			if d, ok := transcript.Members(m.Value, nil); ok {
				x.Reasoning = transcript.Int(transcript.Lookup(d, "thinking_tokens"))
			}
		}
	}
	p.hasUsage = true
	p.usage.Add(x)
	if model == "" {
		model = "unknown"
	}
	// The key is the raw JSON strings: an id with escapes is still one id.
	if !p.opts.NoUsageLog {
		p.t.UsageLog = append(p.t.UsageLog, transcript.UsageEntry{Key: key, Time: ts, Model: model, Usage: x})
	}
	if p.byModel == nil {
		p.byModel = map[string]transcript.Usage{}
	}
	m := p.byModel[model]
	m.Add(x)
	p.byModel[model] = m
}

func (p *parser) finish() *transcript.Transcript { return p.finishInto(p.t) }

// snapshot is finish on a copy, so that more lines can be parsed after it
// (Follow).
func (p *parser) snapshot() *transcript.Transcript {
	c := *p.t
	c.Items = slices.Clone(p.t.Items)
	c.Warnings = slices.Clone(p.t.Warnings)
	c.Compactions = slices.Clone(p.t.Compactions)
	c.UsageLog = slices.Clone(p.t.UsageLog)
	t := p.finishInto(&c)
	if t != nil {
		t.UsageByModel = maps.Clone(t.UsageByModel)
	}
	return t
}

func (p *parser) finishInto(t *transcript.Transcript) *transcript.Transcript {
	if t.PromptCount == 0 && t.ToolCallCount == 0 && p.assistantN == 0 && !p.hasUsage {
		return nil
	}
	t.ID = p.id()
	if p.subagent && t.ParentID == "" {
		t.ParentID = p.recordSID
	}
	if p.forked() {
		t.ForkedFrom = p.forkedFrom
		t.PromptCount -= p.inheritedPrompts
		t.ToolCallCount -= p.inheritedTools
		for i := range t.Items[:min(p.inherited, len(t.Items))] {
			t.Items[i].Inherited = true
		}
	}
	if p.hasUsage {
		u := p.usage
		t.Usage = &u
		t.UsageByModel = p.byModel
	}
	switch {
	case p.customTitle != "":
		t.Title = transcript.Clip(p.customTitle, transcript.MaxTitleRunes)
	case p.aiTitle != "":
		t.Title = transcript.Clip(p.aiTitle, transcript.MaxTitleRunes)
	case p.summary != "":
		t.Title = transcript.Headline(p.summary)
	}
	if p.subagent {
		desc, call := readMeta(t.Path)
		t.ParentCallID = call
		if t.Title == "" {
			t.Title = transcript.Headline(desc)
		}
	}
	if t.Title == "" {
		t.Title = transcript.Headline(t.FirstPrompt)
	}
	return t
}

// id is the session's native id as the records so far give it.
func (p *parser) id() string {
	switch {
	case p.subagent:
		return p.agentID
	case p.baseUUID || p.recordSID == "":
		return p.base
	default:
		return p.recordSID
	}
}

// forked reports whether the records so far make the file a fork of
// another session's conversation (Session.ForkedFrom).
func (p *parser) forked() bool {
	return p.forkedFrom != "" && !p.subagent && p.forkedFrom != p.id()
}

// inheritedItems is how many of the first items a parse of the records so
// far marks Inherited.
func (p *parser) inheritedItems() int {
	if !p.forked() {
		return 0
	}
	return p.inherited
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// NormalizeTool maps a Claude Code tool name onto its canonical name; the
// arguments are already canonical.
func NormalizeTool(name string) string {
	if name == "Agent" {
		return transcript.ToolTask
	}
	return name
}

type promptKind int

const (
	prompt promptKind = iota
	directivePrompt
	notPrompt
)

// notPromptPrefixes start text the user did not type and that is not a
// command: local command output, injected caveats and reminders.
var notPromptPrefixes = []string{
	"<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>",
	"<bash-stdout>", "<bash-stderr>",
	"Caveat: The messages below were generated by the user while running local commands",
	"[Request interrupted by user",
	"This session is being continued from a previous conversation that ran out of context",
}

// directivePrefixes start input that is counted but is not a prompt in
// words: slash commands, ! shell input, background task notices.
var directivePrefixes = []string{"<command-name>", "<command-message>", "<command-args>", "<bash-input>", "<task-notification>"}

var (
	commandNameRE = regexp.MustCompile(`(?s)<command-name>(.*?)</command-name>`)
	commandArgsRE = regexp.MustCompile(`(?s)<command-args>(.*?)</command-args>`)
	bashInputRE   = regexp.MustCompile(`(?s)<bash-input>(.*?)</bash-input>`)
	reminderRE    = regexp.MustCompile(`(?s)^\s*(<system-reminder>.*?</system-reminder>\s*)+$`)
)

// classify decides whether user text is a prompt, a directive or neither,
// and how a directive is shown.
func classify(text string) (promptKind, string) {
	trimmed := strings.TrimSpace(text)
	for _, p := range notPromptPrefixes {
		if strings.HasPrefix(trimmed, p) {
			return notPrompt, ""
		}
	}
	if strings.HasPrefix(trimmed, "<system-reminder>") && reminderRE.MatchString(trimmed) {
		return notPrompt, ""
	}
	for _, p := range directivePrefixes {
		if !strings.HasPrefix(trimmed, p) {
			continue
		}
		if m := commandNameRE.FindStringSubmatch(trimmed); m != nil {
			shown := strings.TrimSpace(m[1])
			if !strings.HasPrefix(shown, "/") {
				shown = "/" + shown
			}
			if a := commandArgsRE.FindStringSubmatch(trimmed); a != nil && strings.TrimSpace(a[1]) != "" {
				shown += " " + strings.TrimSpace(a[1])
			}
			return directivePrompt, shown
		}
		if m := bashInputRE.FindStringSubmatch(trimmed); m != nil {
			return directivePrompt, "! " + strings.TrimSpace(m[1])
		}
		return directivePrompt, trimmed
	}
	return prompt, text
}

func metaFields(data []byte) (description, callID string) {
	ms, ok := transcript.Members(bytes.TrimSpace(data), nil)
	if !ok {
		return "", ""
	}
	return transcript.Str(transcript.Lookup(ms, "description")), transcript.Str(transcript.Lookup(ms, "toolUseId"))
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

func isBase64(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}
