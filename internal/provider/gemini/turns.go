package gemini

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

var (
	_ provider.TurnReader      = Provider{}
	_ provider.PrivateTurnKeys = Provider{}
)

// NewTurnParser implements provider.TurnReader.
func (Provider) NewTurnParser() provider.TurnParser { return &turnParser{} }

// NewTurnLocator implements provider.TurnReader.
func (Provider) NewTurnLocator(env transcript.Env) provider.TurnLocator {
	return &locator{env: env, roots: map[string]string{}}
}

// PrivateTurnKeys implements provider.PrivateTurnKeys: no Gemini hook
// payload carries a turn id (geminihook derives its run id from
// BeforeAgent's timestamp and prompt), so the message ids the chat file
// keys turns by are never the hooks' run ids; and the chat file does not
// mark every turn's end (below), so it is read for the fusion rule only.
func (Provider) PrivateTurnKeys() {}

// cancelled is the info message Gemini CLI 0.61.0 records in its chat
// file when the user cancels a turn: Esc mid-turn, or a tool refused at
// its approval (useGeminiStream's cancelOngoingRequest and
// handleCompletedTools, `addItem({type: "info", text: "Request
// cancelled."})`, which the chat recording service appends as a message
// of type "info").
const cancelled = "Request cancelled."

// turnParser reads Gemini CLI 0.61.0 chat files (the JSONL patch log, see
// the package doc) for what its hooks cannot say. Gemini fires AfterAgent
// with prompt_response "[no response text]" both when the user cancels a
// turn and when the API fails it; its chat file tells them apart by the
// type of the message it records after the prompt (testdata/states,
// recorded):
//
//   - a user message with text (not the <session_context> block the CLI
//     injects first, not a message of tool results) starts a turn, keyed
//     by the message id;
//   - an info message "Request cancelled." ends it as interrupted, and
//     HookSilent: no hook says so;
//   - an error message (an API error, "[API Error: …]") ends it as
//     failed.
//
// A successful end is not read: the model's answer is recorded when its
// stream ends, and a gemini message with text and no toolCalls may still
// get them (a reply that says something and calls a tool is recorded
// once with its text, then again with its toolCalls once they complete,
// after the approval and the run), so no record says the turn is over.
// A gemini message reports its model and, in tokens.input (the request's
// promptTokenCount, cache included), the context the request used: what
// Gemini CLI's own footer divides by the model's limit (TurnUsage; the
// window from contextWindows).
//
// Metadata, "$set" (the whole message list at start and exit),
// "$rewindTo" and "$snapshot" records are skipped, as are lines that hold
// none of the four message types.
type turnParser struct {
	open string // the key of the latest turn started
}

var turnMarkers = [][]byte{[]byte(`"type":"user"`), []byte(`"type":"info"`), []byte(`"type":"error"`), []byte(`"type":"gemini"`)}

// Line implements provider.TurnParser.
func (p *turnParser) Line(raw []byte, out []provider.Turn) []provider.Turn {
	interesting := false
	for _, mk := range turnMarkers {
		if bytes.Contains(raw, mk) {
			interesting = true
			break
		}
	}
	if !interesting || !transcript.ValidJSON(raw) {
		return out
	}
	v := transcript.ParseBytes(raw)
	if !v.IsObject() {
		return out
	}
	m := decodeMessage(v)
	if m.id == "" { // metadata, $set, $rewindTo, $snapshot
		return out
	}
	switch m.typ {
	case "user":
		text := strings.TrimSpace(partsText(m.content))
		if m.display.Exists() {
			if d := strings.TrimSpace(partsText(m.display)); d != "" {
				text = d
			}
		}
		if text == "" || strings.HasPrefix(text, "<session_context>") {
			return out
		}
		p.open = m.id
		return append(out, provider.Turn{Op: provider.TurnStart, Key: m.id, At: m.ts, Text: transcript.Headline(text)})
	case "info":
		if p.open == "" || strings.TrimSpace(partsText(m.content)) != cancelled {
			return out
		}
		return append(out, provider.Turn{Op: provider.TurnEnd, Key: p.open, Kind: proto.KindInterrupted, At: m.ts,
			Text: "chat file: info " + cancelled, HookSilent: true})
	case "gemini":
		u := provider.Usage{Model: m.model}
		if m.tokens.IsObject() {
			u.Context = m.tokens.Get("input").Int()
		}
		if u.Model == "" && u.Context <= 0 {
			return out
		}
		if w := contextWindows[u.Model]; u.Context > 0 && u.Context <= w {
			u.Window = w
		}
		return append(out, provider.Turn{Op: provider.TurnUsage, At: m.ts, Usage: u})
	case "error":
		if p.open == "" {
			return out
		}
		return append(out, provider.Turn{Op: provider.TurnEnd, Key: p.open, Kind: proto.KindFailed, At: m.ts,
			Text: "chat file: error " + transcript.Headline(partsText(m.content))})
	}
	return out
}

// contextWindows are the input token limits of the Gemini models Gemini
// CLI's own table names (packages/core/src/core/tokenLimits.ts, "pulled
// from https://ai.google.dev/gemini-api/docs/models", read 2026-12-02).
// The CLI assumes 1,048,576 for any other model; Muster does not guess:
// another model gets no window.
var contextWindows = map[string]int64{
	"gemini-1.5-pro":        2_097_152,
	"gemini-1.5-flash":      1_048_576,
	"gemini-2.0-flash":      1_048_576,
	"gemini-2.5-pro":        1_048_576,
	"gemini-2.5-flash":      1_048_576,
	"gemini-2.5-flash-lite": 1_048_576,
}

// locator finds a Gemini chat file: with a session id, the newest
// tmp/*/chats/session-*-<id8>.jsonl whose metadata names the whole id (a
// resume adds a file with the same id); otherwise the single main chat
// file of the working directory's project modified at or after the
// cutoff that no other pane follows. It remembers each project
// directory's root.
type locator struct {
	env   transcript.Env
	roots map[string]string // tmp/<project> → its absolute root
	ids   map[string]string // chat file → its session id
}

func (l *locator) Locate(_ context.Context, q provider.TurnQuery) string {
	tmp := filepath.Join(Dir(l.env), "tmp")
	if Dir(l.env) == "" {
		return ""
	}
	if id := q.NativeID; id != "" {
		short := id[:min(len(id), 8)]
		m, _ := filepath.Glob(filepath.Join(tmp, "*", "chats", "session-*-"+short+".jsonl"))
		best, bestMod := "", time.Time{}
		for _, p := range m {
			fi, err := os.Stat(p)
			if err != nil || !fi.Mode().IsRegular() || l.sessionOf(p) != id {
				continue
			}
			if best == "" || fi.ModTime().After(bestMod) {
				best, bestMod = p, fi.ModTime()
			}
		}
		return best
	}
	projects, err := os.ReadDir(tmp)
	if err != nil {
		return ""
	}
	var found []string
	for _, pr := range projects {
		if !pr.IsDir() {
			continue
		}
		dir := filepath.Join(tmp, pr.Name())
		root, ok := l.roots[dir]
		if !ok {
			if b, err := transcript.ReadFileFollow(filepath.Join(dir, ".project_root"), transcript.MaxConfigFile); err == nil {
				root = strings.TrimSpace(string(b))
			}
			if root == "" {
				continue // not written yet: try again next time
			}
			l.roots[dir] = root
		}
		if !samePath(root, q.CWD) {
			continue
		}
		chats := filepath.Join(dir, "chats")
		entries, _ := os.ReadDir(chats)
		for _, e := range entries {
			name := e.Name()
			if !strings.HasPrefix(name, "session-") || !strings.HasSuffix(name, ".jsonl") || !e.Type().IsRegular() {
				continue
			}
			p := filepath.Join(chats, name)
			if p == q.Except || (q.Taken != nil && q.Taken(p)) {
				continue
			}
			if fi, err := e.Info(); err != nil || fi.ModTime().Before(q.Cutoff) {
				continue
			}
			found = append(found, p)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

// sessionOf returns the session id a chat file's first line names, ""
// when it names none (yet).
func (l *locator) sessionOf(path string) string {
	if id, ok := l.ids[path]; ok {
		return id
	}
	f, err := transcript.OpenFile(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, buf)
	line, _, complete := bytes.Cut(buf[:n], []byte{'\n'})
	if !complete {
		return ""
	}
	id := transcript.ParseBytes(line).Get("sessionId").Str()
	if id != "" {
		if l.ids == nil {
			l.ids = map[string]string{}
		}
		l.ids[path] = id
	}
	return id
}

func samePath(a, b string) bool {
	return a != "" && b != "" && filepath.Clean(a) == filepath.Clean(b)
}
