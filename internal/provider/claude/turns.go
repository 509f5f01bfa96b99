package claude

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

var _ provider.TurnReader = Provider{}

// NewTurnParser implements provider.TurnReader.
func (Provider) NewTurnParser() provider.TurnParser { return &turnParser{} }

// NewTurnLocator implements provider.TurnReader.
func (Provider) NewTurnLocator(env transcript.Env) provider.TurnLocator { return locator{env} }

// turnParser reads Claude Code 2.1 transcripts (research/real-cli/claude,
// 2.1.328) into prompt turns, with the history parser's record decoder.
// The turn identifier is the promptId of the user records, which is the
// prompt_id of every hook of the turn:
//
//   - a user record with a new promptId starts the turn, unless it is
//     meta, a tool result, or an interrupt marker. A prompt that is a local
//     command (<command-name>, <local-command-stdout>, <bash-input>, …)
//     starts it only once an assistant record follows, because built-in
//     commands such as /model never reach the model and never end;
//   - system turn_duration (written after the Stop hooks) ends it as
//     succeeded;
//   - an assistant record with isApiErrorMessage (the turn gave up after its
//     API retries; StopFailure) ends it as failed;
//   - a user record of the same promptId whose text starts "[Request
//     interrupted by user" (Esc, or a denied permission) ends it as
//     interrupted; no hook reports that one (HookSilent: Muster applies
//     it even when the hooks report the session).
//
// Every assistant record also reports its message.model and the context
// its request used (TurnUsage, see usageOf).
//
// Sidechain records (sub-agents inlined by older builds) are skipped.
// Records without a promptId (Claude Code before 2.1) start nothing: the
// hooks of those versions have no turn identifier to agree with.
type turnParser struct {
	cur      string         // promptId of the latest prompt
	started  bool           // cur was reported started
	pending  *provider.Turn // cur is a local command waiting for a model reply
	lastText string         // first line of the latest assistant text of cur
	dec      decoder
	msg      []transcript.Member
}

const interruptMarker = "[Request interrupted by user"

// Line implements provider.TurnParser.
func (p *turnParser) Line(raw []byte, out []provider.Turn) []provider.Turn {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return out
	}
	var r record
	if p.dec.decode(raw, &r) != lineRecord || r.isSidechain {
		return out
	}
	at := recordTime(r.timestamp)
	switch {
	case transcript.StrEqual(r.typ, "user"):
		return p.user(&r, at, out)
	case transcript.StrEqual(r.typ, "assistant"):
		return p.assistant(&r, at, out)
	case transcript.StrEqual(r.typ, "system"):
		if transcript.StrEqual(r.subtype, "turn_duration") && p.started {
			out = append(out, provider.Turn{Op: provider.TurnEnd, Key: p.cur, Kind: proto.KindSucceeded, At: at, Text: p.lastText})
			p.started = false
		}
	}
	return out
}

func (p *turnParser) user(r *record, at time.Time, out []provider.Turn) []provider.Turn {
	pid := transcript.Str(r.promptID)
	if pid == "" || r.isMeta {
		return out
	}
	p.msg, _ = transcript.Members(r.message, p.msg)
	text, prompt := userText(transcript.Lookup(p.msg, "content"))
	if pid == p.cur {
		if p.started && strings.HasPrefix(text, interruptMarker) {
			out = append(out, provider.Turn{Op: provider.TurnEnd, Key: pid, Kind: proto.KindInterrupted, At: at, Text: text, HookSilent: true})
			p.started = false
		}
		return out
	}
	if !prompt || strings.HasPrefix(text, interruptMarker) {
		return out
	}
	p.cur, p.started, p.pending, p.lastText = pid, false, nil, ""
	start := provider.Turn{Op: provider.TurnStart, Key: pid, At: at, Text: transcript.Headline(text)}
	if isLocalCommand(text) {
		p.pending = &start
		return out
	}
	p.started = true
	return append(out, start)
}

func (p *turnParser) assistant(r *record, at time.Time, out []provider.Turn) []provider.Turn {
	if p.pending != nil {
		out = append(out, *p.pending)
		p.pending, p.started = nil, true
	}
	p.msg, _ = transcript.Members(r.message, p.msg)
	if t := assistantText(transcript.Lookup(p.msg, "content")); t != "" {
		p.lastText = transcript.Headline(t)
	}
	if u, ok := usageOf(p.msg); ok {
		out = append(out, provider.Turn{Op: provider.TurnUsage, At: at, Usage: u})
	}
	if p.started && r.isAPIError {
		out = append(out, provider.Turn{Op: provider.TurnEnd, Key: p.cur, Kind: proto.KindFailed, At: at, Text: p.lastText})
		p.started = false
	}
	return out
}

// userText returns the text of a user message's content (a string or text
// blocks) and whether it is a prompt: text or images, not tool results.
func userText(content []byte) (string, bool) {
	if transcript.IsString(content) {
		return transcript.Str(content), true
	}
	blocks, ok := transcript.Elements(content, nil)
	if !ok {
		return "", false
	}
	var sb strings.Builder
	prompt := false
	var mem []transcript.Member
	for _, b := range blocks {
		if mem, ok = transcript.Members(b, mem); !ok {
			continue
		}
		switch typ := transcript.Lookup(mem, "type"); {
		case transcript.StrEqual(typ, "text"):
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(transcript.Str(transcript.Lookup(mem, "text")))
			prompt = true
		case transcript.StrEqual(typ, "image"):
			prompt = true
		case transcript.StrEqual(typ, "tool_result"):
			return sb.String(), false
		}
	}
	return sb.String(), prompt
}

// assistantText joins the text blocks of an assistant message.
func assistantText(content []byte) string {
	if transcript.IsString(content) {
		return transcript.Str(content)
	}
	blocks, ok := transcript.Elements(content, nil)
	if !ok {
		return ""
	}
	var sb strings.Builder
	var mem []transcript.Member
	for _, b := range blocks {
		if mem, ok = transcript.Members(b, mem); !ok {
			continue
		}
		if transcript.StrEqual(transcript.Lookup(mem, "type"), "text") {
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(transcript.Str(transcript.Lookup(mem, "text")))
		}
	}
	return sb.String()
}

// localCommandPrefixes start the text of prompts that may never reach the
// model: slash commands, their output, and ! shell input.
var localCommandPrefixes = []string{
	"<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
	"<local-command-stderr>", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
	"Caveat: The messages below were generated by the user while running local commands",
}

func isLocalCommand(text string) bool {
	text = strings.TrimLeft(text, " \t\r\n")
	for _, p := range localCommandPrefixes {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// recordTime parses a record's timestamp as the hooks' event times are
// parsed; zero when absent or bad.
func recordTime(raw []byte) time.Time {
	s := transcript.Str(raw)
	if s == "" {
		return time.Time{}
	}
	t, err := proto.ParseTime(s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// locator finds a Claude Code transcript: projects/<enc-cwd>/<id>.jsonl
// when the native id is known (any project folder when walking);
// otherwise the single unclaimed main transcript of the cwd's project
// folder modified at or after the cutoff.
type locator struct{ env transcript.Env }

func (l locator) Locate(_ context.Context, q provider.TurnQuery) string {
	root := ProjectsDir(l.env)
	if root == "" {
		return ""
	}
	if id := q.NativeID; id != "" {
		for _, d := range projectDirNames(q.CWD) {
			if p := filepath.Join(root, d, id+".jsonl"); isRegular(p) {
				return p
			}
		}
		if q.Walk {
			entries, _ := os.ReadDir(root)
			for _, e := range entries {
				if p := filepath.Join(root, e.Name(), id+".jsonl"); e.IsDir() && isRegular(p) {
					return p
				}
			}
		}
		return ""
	}
	var found []string
	for _, d := range projectDirNames(q.CWD) {
		dir := filepath.Join(root, d)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".jsonl") || strings.HasPrefix(name, "agent-") || !e.Type().IsRegular() {
				continue
			}
			p := filepath.Join(dir, name)
			if p == q.Except || (q.Taken != nil && q.Taken(p)) {
				continue
			}
			if fi, err := e.Info(); err == nil && !fi.ModTime().Before(q.Cutoff) {
				found = append(found, p)
			}
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

// projectDirNames are the project folder names Claude Code may use for cwd:
// every character but ASCII letters and digits replaced by '-' (2.1), and
// only '/' and '.' replaced (the research capture's wording).
func projectDirNames(cwd string) []string {
	if cwd == "" {
		return nil
	}
	all := []byte(cwd)
	some := []byte(cwd)
	for i, c := range all {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			all[i] = '-'
		}
		if c == '/' || c == '.' {
			some[i] = '-'
		}
	}
	if string(all) == string(some) {
		return []string{string(all)}
	}
	return []string{string(all), string(some)}
}

func isRegular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
