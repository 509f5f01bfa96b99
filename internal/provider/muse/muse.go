package muse

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// Name is the provider name used in history and session references.
const Name = "muse"

// Source is the Muse transcript source.
type Source struct{}

// New returns the Muse source.
func New() transcript.Source { return &Source{} }

// Provider implements transcript.Source.
func (*Source) Provider() string { return Name }

// AgentsRoot is $MUSE_AGENTS_DIR, or ~/agents.
func AgentsRoot(env transcript.Env) string { return env.Dir("MUSE_AGENTS_DIR", "", "agents") }

// Roots implements transcript.Source.
func (*Source) Roots(env transcript.Env) []string {
	if root := AgentsRoot(env); root != "" {
		return []string{root}
	}
	return nil
}

// Discover implements transcript.Source: every
// <root>/<agentId>/sessions/<agentId>.jsonl that is a regular file.
func (*Source) Discover(ctx context.Context, env transcript.Env) ([]transcript.File, error) {
	root := AgentsRoot(env)
	if root == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil // a missing or unreadable root has no sessions
	}
	var files []transcript.File
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(root, name, "sessions", name+".jsonl")
		if f, ok := transcript.CandidateAt(path); ok {
			files = append(files, f)
		}
	}
	return files, nil
}

// Parse implements transcript.Source. A session with neither prompts nor
// tool calls is not discoverable and yields no transcript.
func (*Source) Parse(ctx context.Context, env transcript.Env, path string, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	f, err := transcript.OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("open muse transcript: %w", err)
	}
	defer f.Close()
	return parseFrom(ctx, env, path, f, opts)
}

// Follow implements transcript.Follower: a Muse session log is only
// appended to.
func (*Source) Follow(env transcript.Env, path string, opts transcript.ParseOptions) transcript.Follow {
	p := newParser(env, path, opts)
	return &transcript.LineFollow{
		What: "muse transcript",
		Line: p.line,
		Skipped: func(n int) {
			p.warnf(n, "longer than %d bytes; skipped", transcript.DefaultMaxLine)
		},
		Snapshot: func() []*transcript.Transcript {
			if t := p.snapshot(); t.PromptCount > 0 || t.ToolCallCount > 0 {
				return []*transcript.Transcript{t}
			}
			return nil
		},
	}
}

// parseFrom parses the transcript at path, read from r.
func parseFrom(ctx context.Context, env transcript.Env, path string, r io.Reader, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	p := newParser(env, path, opts)
	sc := transcript.NewLineScanner(r, 0)
	for sc.Scan() {
		if sc.Line()%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if sc.TooLong() {
			p.warnf(sc.Line(), "longer than %d bytes; skipped", transcript.DefaultMaxLine)
			continue
		}
		p.line(sc.Line(), sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read muse transcript: %w", err)
	}
	t := p.finish()
	if t.PromptCount == 0 && t.ToolCallCount == 0 {
		return nil, nil
	}
	return []*transcript.Transcript{t}, nil
}

type parser struct {
	env     transcript.Env
	opts    transcript.ParseOptions
	t       *transcript.Transcript
	agentID string
	names   transcript.CallNames // call_id → canonical and raw tool name
	top     []transcript.Member
	budget  *transcript.ImageBudget
}

func newParser(env transcript.Env, path string, opts transcript.ParseOptions) *parser {
	agentID := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	return &parser{
		env:     env,
		opts:    opts,
		agentID: agentID,
		t:       &transcript.Transcript{Session: transcript.Session{Provider: Name, Path: path}},
		budget:  transcript.NewImageBudget(),
	}
}

func (p *parser) warnf(line int, format string, args ...any) {
	p.t.Warnings = append(p.t.Warnings, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

func (p *parser) line(n int, raw []byte) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return
	}
	rec, ok := transcript.Members(raw, p.top)
	p.top = rec
	if !ok {
		if transcript.ValidJSON(raw) {
			p.warnf(n, "not a JSON object; skipped")
		} else {
			p.warnf(n, "malformed JSON; skipped")
		}
		return
	}
	get := func(key string) []byte { return transcript.Lookup(rec, key) }
	switch transcript.Str(get("type")) {
	case "session_header":
		if id := transcript.Str(get("session_id")); id != "" && p.t.ID == "" {
			p.t.ID = id
		}
		p.seen(parseTime(get("created_at")))
		if cwd := transcript.Str(get("cwd")); cwd != "" {
			p.t.CWD = cwd
		}
	case "item":
		item, ok := transcript.Members(get("item"), nil)
		if !ok {
			return
		}
		ts := parseTime(get("created_at"))
		p.seen(ts)
		p.item(n, item, transcript.Str(get("source")), ts)
	case "compaction_checkpoint":
		// The summary is deliberately never read.
		ts := parseTime(get("created_at"))
		p.seen(ts)
		mark := transcript.CompactionMark{ID: transcript.Str(get("compaction_id")), Trigger: transcript.Str(get("trigger")), Time: ts}
		p.t.Compactions = append(p.t.Compactions, mark)
		p.add(transcript.Item{Kind: transcript.Compaction, Time: ts, Source: mark.Trigger})
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
		p.opts.Item(it)
	default:
		p.t.Items = append(p.t.Items, it)
	}
}

func (p *parser) item(n int, item []transcript.Member, source string, ts time.Time) {
	get := func(key string) []byte { return transcript.Lookup(item, key) }
	switch transcript.Str(get("type")) {
	case "message":
		p.message(n, transcript.Str(get("role")), transcript.Str(get("text")), nil, source, ts)
	case "message_parts":
		var texts []string
		var refs [][]transcript.Member
		parts, _ := transcript.Elements(get("parts"), nil)
		for _, raw := range parts {
			part, ok := transcript.Members(raw, nil)
			if !ok {
				continue
			}
			switch typ := transcript.Lookup(part, "type"); {
			case transcript.StrEqual(typ, "file_ref"):
				refs = append(refs, part)
			case typ == nil || transcript.StrEqual(typ, "text"):
				if s := transcript.Str(transcript.Lookup(part, "text")); s != "" {
					texts = append(texts, s)
				}
			}
		}
		p.message(n, transcript.Str(get("role")), strings.Join(texts, "\n"), refs, source, ts)
	case "thinking":
		if s := transcript.Str(get("thinking")); s != "" {
			p.add(transcript.Item{Kind: transcript.Thinking, Time: ts, Text: s, Source: source})
		}
	case "commentary_text":
		if s := transcript.Str(get("text")); s != "" {
			p.add(transcript.Item{Kind: transcript.AssistantText, Time: ts, Text: s, Source: source})
		}
	case "function_call":
		p.t.ToolCallCount++
		if p.opts.SummaryOnly {
			return
		}
		callID, name := transcript.Str(get("call_id")), transcript.Str(get("name"))
		tool, input := NormalizeTool(name, arguments(get("arguments")))
		if callID != "" {
			p.names.Set(callID, [2]string{tool, name})
		}
		p.add(transcript.Item{Kind: transcript.ToolUse, Time: ts, Source: source, CallID: callID, Tool: tool, RawTool: name, Input: input})
	case "function_call_output":
		if p.opts.SummaryOnly {
			return
		}
		callID := transcript.Str(get("call_id"))
		it := transcript.Item{Kind: transcript.ToolResult, Time: ts, Source: source, CallID: callID, Text: outputText(get("output"))}
		if string(get("success")) == "false" {
			it.IsError = true
		}
		if names, ok := p.names.Get(callID); ok {
			it.Tool, it.RawTool = names[0], names[1]
		}
		p.add(it)
	}
}

func (p *parser) message(n int, role, text string, refs [][]transcript.Member, source string, ts time.Time) {
	switch role {
	case "assistant":
		if strings.TrimSpace(text) != "" {
			p.add(transcript.Item{Kind: transcript.AssistantText, Time: ts, Text: text, Source: source})
		}
		return
	case "user":
	default: // developer (runtime instructions) and unknown roles
		return
	}
	if strings.TrimSpace(text) == "" {
		text = ""
		if len(refs) == 0 {
			return
		}
	}
	shown := text
	if shown == "" {
		shown = "(image)"
	}
	directive := IsDirective(source) || strings.HasPrefix(strings.TrimSpace(text), "[Subagent Context]")
	p.t.PromptCount++
	if !directive && p.t.FirstPrompt == "" {
		p.t.FirstPrompt = transcript.Clip(shown, transcript.MaxFirstPromptRunes)
	}
	if p.opts.SummaryOnly {
		return
	}
	it := transcript.Item{Kind: transcript.UserPrompt, Time: ts, Text: shown, Source: source, Directive: directive}
	for _, ref := range refs {
		if img, ok := p.image(n, ref); ok {
			it.Images = append(it.Images, img)
		}
	}
	p.add(it)
}

// image checks one file_ref part and embeds it, or records why not.
func (p *parser) image(n int, ref []transcript.Member) (transcript.Image, bool) {
	path := transcript.Str(transcript.Lookup(ref, "path"))
	bl := transcript.Lookup(ref, "bytes_len")
	var size int64
	switch f, err := strconv.ParseFloat(string(bl), 64); {
	case bl == nil || string(bl) == "null":
		p.warnf(n, "image %q not embedded: bytes_len is missing", path)
		return transcript.Image{}, false
	case err != nil || bl[0] == '"' || f != math.Trunc(f) || f <= 0 || f > math.MaxInt32:
		p.warnf(n, "image %q not embedded: bytes_len %s is not a bounded positive integer", path, bl)
		return transcript.Image{}, false
	default:
		size = int64(f)
	}
	img, err := transcript.EmbedImage(p.env.Home, transcript.ImageRef{
		Path:     path,
		MIME:     transcript.Str(transcript.Lookup(ref, "mime_type")),
		BytesLen: size,
		SHA256:   transcript.Str(transcript.Lookup(ref, "sha256")),
	}, p.budget)
	if err != nil {
		p.warnf(n, "image %q not embedded: %v", path, err)
		return transcript.Image{}, false
	}
	return img, true
}

func (p *parser) finish() *transcript.Transcript { return p.finishInto(p.t) }

// snapshot is finish on a copy, so that more lines can be parsed after it
// (Follow).
func (p *parser) snapshot() *transcript.Transcript {
	c := *p.t
	c.Items = slices.Clone(p.t.Items)
	c.Warnings = slices.Clone(p.t.Warnings)
	c.Compactions = slices.Clone(p.t.Compactions)
	return p.finishInto(&c)
}

func (p *parser) finishInto(t *transcript.Transcript) *transcript.Transcript {
	if t.ID == "" {
		t.ID = p.agentID
	}
	t.Title = transcript.Headline(t.FirstPrompt)
	model, warn := snapshotModel(filepath.Join(filepath.Dir(t.Path), "sessions.json"), t.ID, p.agentID)
	t.Model = model
	if warn != "" {
		t.Warnings = append(t.Warnings, warn)
	}
	return t
}

// IsDirective reports whether a source label marks a runtime directive
// rather than an interactive turn: dotted labels (runtime.feed,
// scheduler.cron, …) are directives, bare ones (runtime) are not.
func IsDirective(source string) bool {
	return strings.Contains(source, ".")
}

// toolMap maps Muse built-in tools to canonical names and argument names.
var toolMap = map[string]struct {
	name    string
	renames map[string]string
}{
	"exec":  {transcript.ToolBash, map[string]string{"cmd": "command"}},
	"edit":  {transcript.ToolEdit, map[string]string{"path": "file_path", "old_text": "old_string", "new_text": "new_string"}},
	"write": {transcript.ToolWrite, map[string]string{"path": "file_path"}},
	"read":  {transcript.ToolRead, map[string]string{"path": "file_path"}},
}

// NormalizeTool maps a Muse tool call onto its canonical name and
// arguments; unknown and namespaced tools pass through unchanged.
func NormalizeTool(name string, args json.RawMessage) (string, json.RawMessage) {
	m, ok := toolMap[name]
	if !ok {
		return name, args
	}
	return m.name, transcript.RenameKeys(args, m.renames)
}

// arguments decodes function_call arguments: a JSON string holding JSON
// (the format), an object (tolerated), or anything else kept as
// {"arguments": <raw text>}.
func arguments(raw []byte) json.RawMessage {
	switch {
	case transcript.IsString(raw):
		s := strings.TrimSpace(transcript.Str(raw))
		if s == "" {
			return nil
		}
		if transcript.ValidJSON([]byte(s)) {
			return json.RawMessage(s)
		}
		b, _ := json.Marshal(map[string]string{"arguments": transcript.Str(raw)})
		return b
	case len(raw) > 0 && (raw[0] == '{' || raw[0] == '['):
		return json.RawMessage(bytes.Clone(raw))
	}
	return nil
}

// outputText renders a function_call_output's output: a string as is,
// other JSON compactly.
func outputText(raw []byte) string {
	switch {
	case transcript.IsString(raw):
		return transcript.Str(raw)
	case raw == nil || string(raw) == "null":
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// parseTime reads an ISO-8601 string or epoch seconds (a number, as on
// compaction_checkpoint; a value too large for seconds is taken as
// milliseconds).
func parseTime(raw []byte) time.Time {
	if transcript.IsString(raw) {
		ts, err := time.Parse(time.RFC3339Nano, transcript.Str(raw))
		if err != nil {
			return time.Time{}
		}
		return ts.UTC()
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return time.Time{}
	}
	if v > 1e11 {
		v /= 1000
	}
	if v > 1e11 {
		return time.Time{}
	}
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

// maxIndexBytes bounds how much of sessions.json is read.
const maxIndexBytes = 8 << 20

// snapshotModel reads the model_id snapshot from sessions.json. A missing
// file is silent; an unusable one is a warning.
func snapshotModel(path, sessionID, agentID string) (model, warning string) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", ""
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxIndexBytes {
		return "", "sessions.json: not a regular file under 8 MiB; ignored"
	}
	data, err := transcript.ReadFileFollow(path, maxIndexBytes)
	if err != nil {
		return "", fmt.Sprintf("sessions.json: %v; ignored", err)
	}
	data = bytes.TrimSpace(data)
	doc, ok := transcript.Members(data, nil)
	if !ok {
		if transcript.ValidJSON(data) {
			return "", "sessions.json: not a JSON object; ignored"
		}
		return "", "sessions.json: malformed JSON; ignored"
	}
	if m := entryModel(doc); m != "" {
		return m, ""
	}
	var only []string
	var match string
	visit := func(key string, raw []byte) {
		e, ok := transcript.Members(raw, nil)
		if !ok {
			return
		}
		m := entryModel(e)
		if m == "" {
			return
		}
		only = append(only, m)
		for _, id := range []string{key, transcript.Str(transcript.Lookup(e, "session_id")), transcript.Str(transcript.Lookup(e, "sessionId")), transcript.Str(transcript.Lookup(e, "id")), transcript.Str(transcript.Lookup(e, "agent_id"))} {
			if id != "" && (id == sessionID || id == agentID) && match == "" {
				match = m
			}
		}
	}
	entries := doc
	if s := transcript.Lookup(doc, "sessions"); len(s) > 0 && s[0] == '{' {
		entries, _ = transcript.Members(s, nil)
	} else if len(s) > 0 && s[0] == '[' {
		els, _ := transcript.Elements(s, nil)
		entries = entries[:0:0]
		for _, el := range els {
			entries = append(entries, transcript.Member{Value: el})
		}
	}
	for _, e := range entries {
		visit(string(e.Key), e.Value)
	}
	switch {
	case match != "":
		return match, ""
	case len(only) == 1:
		return only[0], ""
	}
	return "", ""
}

func entryModel(e []transcript.Member) string {
	if cw, ok := transcript.Members(transcript.Lookup(e, "context_window_usage"), nil); ok {
		if m := transcript.Str(transcript.Lookup(cw, "model_id")); m != "" {
			return m
		}
	}
	return transcript.Str(transcript.Lookup(e, "model_id"))
}
