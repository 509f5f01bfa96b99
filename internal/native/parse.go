package native

import (
	"bytes"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/transcript"
)

// turnOp says what a transcript record does to a prompt turn.
type turnOp uint8

const (
	opStart turnOp = iota + 1 // a prompt started the turn Key
	opEnd                     // the turn Key ended with Kind
)

// turnRecord is what one transcript line says about a prompt turn.
type turnRecord struct {
	Op   turnOp
	Key  string          // the provider's own turn identifier
	Kind proto.EventKind // for opEnd: succeeded, failed or interrupted
	At   time.Time       // the record's timestamp; zero when it has none
	Text string          // opStart: the prompt's headline; opEnd: the last assistant text
}

// lineParser reads a transcript one complete line at a time. It appends
// what the line says about turns to out and returns it; a line it cannot
// read says nothing.
type lineParser interface {
	line(raw []byte, out []turnRecord) []turnRecord
}

func newParser(provider string) lineParser {
	switch provider {
	case providerClaude:
		return &claudeTurns{}
	case providerCodex:
		return &codexTurns{}
	}
	return nil
}

// claudeTurns reads Claude Code 2.1 transcripts (research/real-cli/claude,
// 2.1.328). The turn identifier is the promptId of the user records, which
// is the prompt_id of every hook of the turn:
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
//     interrupted; no hook reports that one.
//
// Sidechain records (sub-agents inlined by older builds) are skipped.
// Records without a promptId (Claude Code before 2.1) start nothing: the
// hooks of those versions have no turn identifier to agree with.
type claudeTurns struct {
	cur      string      // promptId of the latest prompt
	started  bool        // cur was reported started
	pending  *turnRecord // cur is a local command waiting for a model reply
	lastText string      // first line of the latest assistant text of cur
	members  []transcript.Member
}

// claudeSkipped are record types that say nothing about turns; a line
// that starts with one of them is not parsed at all (api-request records
// run to hundreds of kilobytes).
var claudeSkipped = []string{
	"mode", "permission-mode", "atis-latch", "file-history-snapshot", "api-request",
	"api-request-blob", "api-request-shape", "tools-used", "last-prompt", "cost-state",
	"summary", "custom-title", "ai-title", "attachment",
}

const interruptMarker = "[Request interrupted by user"

func (p *claudeTurns) line(raw []byte, out []turnRecord) []turnRecord {
	if t, ok := leadingType(raw); ok {
		for _, s := range claudeSkipped {
			if t == s {
				return out
			}
		}
	}
	var ok bool
	if p.members, ok = transcript.Members(raw, p.members); !ok {
		return out
	}
	m := p.members
	if transcript.Bool(transcript.Lookup(m, "isSidechain")) {
		return out
	}
	at := recordTime(transcript.Lookup(m, "timestamp"))
	switch typ := transcript.Lookup(m, "type"); {
	case transcript.StrEqual(typ, "user"):
		return p.user(m, at, out)
	case transcript.StrEqual(typ, "assistant"):
		return p.assistant(m, at, out)
	case transcript.StrEqual(typ, "system"):
		if transcript.StrEqual(transcript.Lookup(m, "subtype"), "turn_duration") && p.started {
			out = append(out, turnRecord{Op: opEnd, Key: p.cur, Kind: proto.KindSucceeded, At: at, Text: p.lastText})
			p.started = false
		}
	}
	return out
}

func (p *claudeTurns) user(m []transcript.Member, at time.Time, out []turnRecord) []turnRecord {
	pid := transcript.Str(transcript.Lookup(m, "promptId"))
	if pid == "" || transcript.Bool(transcript.Lookup(m, "isMeta")) {
		return out
	}
	msg, _ := transcript.Members(transcript.Lookup(m, "message"), nil)
	text, prompt := userText(transcript.Lookup(msg, "content"))
	if pid == p.cur {
		if p.started && strings.HasPrefix(text, interruptMarker) {
			out = append(out, turnRecord{Op: opEnd, Key: pid, Kind: proto.KindInterrupted, At: at, Text: text})
			p.started = false
		}
		return out
	}
	if !prompt || strings.HasPrefix(text, interruptMarker) {
		return out
	}
	p.cur, p.started, p.pending, p.lastText = pid, false, nil, ""
	start := turnRecord{Op: opStart, Key: pid, At: at, Text: transcript.Headline(text)}
	if isLocalCommand(text) {
		p.pending = &start
		return out
	}
	p.started = true
	return append(out, start)
}

func (p *claudeTurns) assistant(m []transcript.Member, at time.Time, out []turnRecord) []turnRecord {
	if p.pending != nil {
		out = append(out, *p.pending)
		p.pending, p.started = nil, true
	}
	msg, _ := transcript.Members(transcript.Lookup(m, "message"), nil)
	if t := assistantText(transcript.Lookup(msg, "content")); t != "" {
		p.lastText = transcript.Headline(t)
	}
	if p.started && transcript.Bool(transcript.Lookup(m, "isApiErrorMessage")) {
		out = append(out, turnRecord{Op: opEnd, Key: p.cur, Kind: proto.KindFailed, At: at, Text: p.lastText})
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

// leadingType returns T when raw starts with {"type":"T", the shape of
// Claude Code's bookkeeping records.
func leadingType(raw []byte) (string, bool) {
	const prefix = `{"type":"`
	if !bytes.HasPrefix(raw, []byte(prefix)) {
		return "", false
	}
	rest := raw[len(prefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || end > 64 {
		return "", false
	}
	return string(rest[:end]), true
}

// codexTurns reads Codex CLI rollouts (research/real-cli/codex, 0.169.0).
// The turn identifier is the turn_id of the event_msg records, which is the
// turn_id of every hook of the turn:
//
//   - event_msg task_started starts the turn;
//   - event_msg task_complete ends it as succeeded (last_agent_message is
//     the message);
//   - event_msg turn_aborted ends it as interrupted (Esc, a denied
//     permission; Codex fires no hook for either).
//
// Records of a nested turn (root_turn_id set and different) are skipped.
type codexTurns struct {
	members []transcript.Member
	payload []transcript.Member
}

var codexMarkers = [][]byte{[]byte("task_started"), []byte("task_complete"), []byte("turn_aborted")}

func (p *codexTurns) line(raw []byte, out []turnRecord) []turnRecord {
	interesting := false
	for _, mk := range codexMarkers {
		if bytes.Contains(raw, mk) {
			interesting = true
			break
		}
	}
	if !interesting {
		return out
	}
	var ok bool
	if p.members, ok = transcript.Members(raw, p.members); !ok {
		return out
	}
	if !transcript.StrEqual(transcript.Lookup(p.members, "type"), "event_msg") {
		return out
	}
	if p.payload, ok = transcript.Members(transcript.Lookup(p.members, "payload"), p.payload); !ok {
		return out
	}
	pl := p.payload
	turn := transcript.Str(transcript.Lookup(pl, "turn_id"))
	if turn == "" {
		return out
	}
	if root := transcript.Str(transcript.Lookup(pl, "root_turn_id")); root != "" && root != turn {
		return out
	}
	at := recordTime(transcript.Lookup(p.members, "timestamp"))
	switch typ := transcript.Lookup(pl, "type"); {
	case transcript.StrEqual(typ, "task_started"):
		out = append(out, turnRecord{Op: opStart, Key: turn, At: at})
	case transcript.StrEqual(typ, "task_complete"):
		out = append(out, turnRecord{Op: opEnd, Key: turn, Kind: proto.KindSucceeded, At: at,
			Text: transcript.Headline(transcript.Str(transcript.Lookup(pl, "last_agent_message")))})
	case transcript.StrEqual(typ, "turn_aborted"):
		reason := transcript.Str(transcript.Lookup(pl, "reason"))
		if reason == "" {
			reason = "aborted"
		}
		out = append(out, turnRecord{Op: opEnd, Key: turn, Kind: proto.KindInterrupted, At: at, Text: reason})
	}
	return out
}

// recordTime parses a record's ISO 8601 timestamp; zero when absent or bad.
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
