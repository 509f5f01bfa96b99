package muse

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/musterhq/muster/internal/transcript"
)

// Provider is the provider name used in history and session references.
const Provider = "muse"

// Source is the Muse transcript source.
type Source struct{}

// New returns the Muse source.
func New() transcript.Source { return &Source{} }

// Provider implements transcript.Source.
func (*Source) Provider() string { return Provider }

// AgentsRoot is $MUSE_AGENTS_DIR, or ~/agents.
func AgentsRoot(env transcript.Env) string {
	if dir := env.Get("MUSE_AGENTS_DIR"); dir != "" {
		return dir
	}
	if env.Home == "" {
		return ""
	}
	return filepath.Join(env.Home, "agents")
}

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
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		files = append(files, transcript.StatFile(path, fi))
	}
	return files, nil
}

// Parse implements transcript.Source. A session with neither prompts nor
// tool calls is not discoverable and yields no transcript.
func (*Source) Parse(ctx context.Context, env transcript.Env, path string, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open muse transcript: %w", err)
	}
	defer f.Close()
	p := newParser(env, path, opts)
	sc := transcript.NewLineScanner(f, 0)
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
	names   map[string][2]string // call_id → canonical and raw tool name
	budget  *transcript.ImageBudget
}

func newParser(env transcript.Env, path string, opts transcript.ParseOptions) *parser {
	agentID := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	return &parser{
		env:     env,
		opts:    opts,
		agentID: agentID,
		t:       &transcript.Transcript{Session: transcript.Session{Provider: Provider, Path: path}},
		names:   map[string][2]string{},
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
	if !gjson.ValidBytes(raw) {
		p.warnf(n, "malformed JSON; skipped")
		return
	}
	if raw[0] != '{' {
		p.warnf(n, "not a JSON object; skipped")
		return
	}
	rec := gjson.ParseBytes(raw)
	switch str(rec.Get("type")) {
	case "session_header":
		if id := str(rec.Get("session_id")); id != "" && p.t.ID == "" {
			p.t.ID = id
		}
		p.seen(parseTime(rec.Get("created_at")))
		if cwd := str(rec.Get("cwd")); cwd != "" {
			p.t.CWD = cwd
		}
	case "item":
		item := rec.Get("item")
		if !item.IsObject() {
			return
		}
		ts := parseTime(rec.Get("created_at"))
		p.seen(ts)
		p.item(n, item, str(rec.Get("source")), ts)
	case "compaction_checkpoint":
		// The summary is deliberately never read.
		ts := parseTime(rec.Get("created_at"))
		p.seen(ts)
		mark := transcript.CompactionMark{ID: str(rec.Get("compaction_id")), Trigger: str(rec.Get("trigger")), Time: ts}
		p.t.Compactions = append(p.t.Compactions, mark)
		if !p.opts.SummaryOnly {
			p.t.Items = append(p.t.Items, transcript.Item{Kind: transcript.Compaction, Time: ts, Source: mark.Trigger})
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
	if !p.opts.SummaryOnly {
		p.t.Items = append(p.t.Items, it)
	}
}

func (p *parser) item(n int, item gjson.Result, source string, ts time.Time) {
	switch str(item.Get("type")) {
	case "message":
		p.message(n, str(item.Get("role")), str(item.Get("text")), nil, source, ts)
	case "message_parts":
		var texts []string
		var refs []gjson.Result
		item.Get("parts").ForEach(func(_, part gjson.Result) bool {
			switch str(part.Get("type")) {
			case "file_ref":
				refs = append(refs, part)
			case "text", "":
				if s := str(part.Get("text")); s != "" {
					texts = append(texts, s)
				}
			}
			return true
		})
		p.message(n, str(item.Get("role")), strings.Join(texts, "\n"), refs, source, ts)
	case "thinking":
		if s := str(item.Get("thinking")); s != "" {
			p.add(transcript.Item{Kind: transcript.Thinking, Time: ts, Text: s, Source: source})
		}
	case "commentary_text":
		if s := str(item.Get("text")); s != "" {
			p.add(transcript.Item{Kind: transcript.AssistantText, Time: ts, Text: s, Source: source})
		}
	case "function_call":
		p.t.ToolCallCount++
		if p.opts.SummaryOnly {
			return
		}
		callID, name := str(item.Get("call_id")), str(item.Get("name"))
		tool, input := NormalizeTool(name, arguments(item.Get("arguments")))
		if callID != "" {
			p.names[callID] = [2]string{tool, name}
		}
		p.add(transcript.Item{Kind: transcript.ToolUse, Time: ts, Source: source, CallID: callID, Tool: tool, RawTool: name, Input: input})
	case "function_call_output":
		if p.opts.SummaryOnly {
			return
		}
		callID := str(item.Get("call_id"))
		it := transcript.Item{Kind: transcript.ToolResult, Time: ts, Source: source, CallID: callID, Text: outputText(item.Get("output"))}
		if s := item.Get("success"); s.Type == gjson.False {
			it.IsError = true
		}
		if names, ok := p.names[callID]; ok {
			it.Tool, it.RawTool = names[0], names[1]
		}
		p.add(it)
	}
}

func (p *parser) message(n int, role, text string, refs []gjson.Result, source string, ts time.Time) {
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
func (p *parser) image(n int, ref gjson.Result) (transcript.Image, bool) {
	path := str(ref.Get("path"))
	bl := ref.Get("bytes_len")
	var size int64
	switch {
	case !bl.Exists() || bl.Type == gjson.Null:
		p.warnf(n, "image %q not embedded: bytes_len is missing", path)
		return transcript.Image{}, false
	case bl.Type != gjson.Number || bl.Num != math.Trunc(bl.Num) || bl.Num <= 0 || bl.Num > math.MaxInt32:
		p.warnf(n, "image %q not embedded: bytes_len %s is not a bounded positive integer", path, bl.Raw)
		return transcript.Image{}, false
	default:
		size = int64(bl.Num)
	}
	img, err := transcript.EmbedImage(p.env.Home, transcript.ImageRef{
		Path:     path,
		MIME:     str(ref.Get("mime_type")),
		BytesLen: size,
		SHA256:   str(ref.Get("sha256")),
	}, p.budget)
	if err != nil {
		p.warnf(n, "image %q not embedded: %v", path, err)
		return transcript.Image{}, false
	}
	return img, true
}

func (p *parser) finish() *transcript.Transcript {
	t := p.t
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

// arguments decodes function_call arguments: a JSON string holding an
// object (the format), an object (tolerated), or anything else kept as
// {"arguments": <raw text>}.
func arguments(r gjson.Result) json.RawMessage {
	switch {
	case r.Type == gjson.String:
		s := strings.TrimSpace(r.Str)
		if s == "" {
			return nil
		}
		if gjson.Valid(s) {
			return json.RawMessage(s)
		}
		b, _ := json.Marshal(map[string]string{"arguments": r.Str})
		return b
	case r.IsObject() || r.IsArray():
		return json.RawMessage(r.Raw)
	}
	return nil
}

// outputText renders a function_call_output's output: a string as is,
// other JSON compactly.
func outputText(r gjson.Result) string {
	switch r.Type {
	case gjson.String:
		return r.Str
	case gjson.Null:
		return ""
	}
	if !r.Exists() {
		return ""
	}
	return r.Raw
}

func str(r gjson.Result) string {
	if r.Type == gjson.String {
		return r.Str
	}
	return ""
}

// parseTime reads an ISO-8601 string or epoch seconds (a number, as on
// compaction_checkpoint; a value too large for seconds is taken as
// milliseconds).
func parseTime(r gjson.Result) time.Time {
	switch r.Type {
	case gjson.String:
		ts, err := time.Parse(time.RFC3339Nano, r.Str)
		if err != nil {
			return time.Time{}
		}
		return ts.UTC()
	case gjson.Number:
		v := r.Num
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
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
	return time.Time{}
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
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Sprintf("sessions.json: %v; ignored", err)
	}
	data = bytes.TrimSpace(data)
	if !gjson.ValidBytes(data) {
		return "", "sessions.json: malformed JSON; ignored"
	}
	if len(data) == 0 || data[0] != '{' {
		return "", "sessions.json: not a JSON object; ignored"
	}
	doc := gjson.ParseBytes(data)
	if m := entryModel(doc); m != "" {
		return m, ""
	}
	var only []string
	var match string
	visit := func(key string, e gjson.Result) {
		if !e.IsObject() {
			return
		}
		m := entryModel(e)
		if m == "" {
			return
		}
		only = append(only, m)
		for _, id := range []string{key, str(e.Get("session_id")), str(e.Get("sessionId")), str(e.Get("id")), str(e.Get("agent_id"))} {
			if id != "" && (id == sessionID || id == agentID) && match == "" {
				match = m
			}
		}
	}
	each := func(r gjson.Result) {
		r.ForEach(func(k, v gjson.Result) bool {
			visit(k.String(), v)
			return true
		})
	}
	if s := doc.Get("sessions"); s.IsObject() || s.IsArray() {
		each(s)
	} else {
		each(doc)
	}
	switch {
	case match != "":
		return match, ""
	case len(only) == 1:
		return only[0], ""
	}
	return "", ""
}

func entryModel(e gjson.Result) string {
	if m := str(e.Get("context_window_usage.model_id")); m != "" {
		return m
	}
	return str(e.Get("model_id"))
}
