package codex

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
func (Provider) NewTurnLocator(env transcript.Env) provider.TurnLocator {
	return &locator{env: env, metas: map[string]SessionMeta{}}
}

// turnParser reads Codex CLI rollouts (research/real-cli/codex, 0.169.0)
// into prompt turns, with the history parser's envelope decoding. The turn
// identifier is the turn_id of the event_msg records, which is the turn_id
// of every hook of the turn:
//
//   - event_msg task_started starts the turn;
//   - event_msg task_complete ends it as succeeded (last_agent_message is
//     the message);
//   - event_msg turn_aborted ends it as interrupted (Esc, a denied
//     permission; Codex fires no hook for either, so the end is HookSilent
//     and applies while the hooks report too).
//
// turn_context records report the turn's model, and event_msg token_count
// records the context the last request used (last_token_usage's
// total_tokens, what Codex itself counts as in the window) and the
// model's window (info.model_context_window): both as TurnUsage.
//
// Records of a nested turn (root_turn_id set and different) are skipped.
// Lines that mention none of those record types are not parsed at all.
type turnParser struct {
	top, payload, info []transcript.Member
}

var turnMarkers = [][]byte{[]byte("task_started"), []byte("task_complete"), []byte("turn_aborted"), []byte("turn_context"), []byte("token_count")}

// Line implements provider.TurnParser.
func (p *turnParser) Line(raw []byte, out []provider.Turn) []provider.Turn {
	interesting := false
	for _, mk := range turnMarkers {
		if bytes.Contains(raw, mk) {
			interesting = true
			break
		}
	}
	if !interesting {
		return out
	}
	var ok bool
	if p.top, ok = transcript.Members(raw, p.top); !ok {
		return out
	}
	typ, payload, ts := envelope(p.top)
	turnContext := transcript.StrEqual(typ, "turn_context")
	if !turnContext && !transcript.StrEqual(typ, "event_msg") {
		return out
	}
	if p.payload, ok = transcript.Members(payload, p.payload); !ok {
		return out
	}
	pl := p.payload
	at := recordTime(ts)
	turn := transcript.Str(transcript.Lookup(pl, "turn_id"))
	if root := transcript.Str(transcript.Lookup(pl, "root_turn_id")); root != "" && root != turn {
		return out
	}
	if turnContext {
		if m := transcript.Str(transcript.Lookup(pl, "model")); m != "" {
			out = append(out, provider.Turn{Op: provider.TurnUsage, At: at, Usage: provider.Usage{Model: m}})
		}
		return out
	}
	if transcript.StrEqual(transcript.Lookup(pl, "type"), "token_count") {
		return p.tokenCount(pl, at, out)
	}
	if turn == "" {
		return out
	}
	switch typ := transcript.Lookup(pl, "type"); {
	case transcript.StrEqual(typ, "task_started"):
		out = append(out, provider.Turn{Op: provider.TurnStart, Key: turn, At: at})
	case transcript.StrEqual(typ, "task_complete"):
		out = append(out, provider.Turn{Op: provider.TurnEnd, Key: turn, Kind: proto.KindSucceeded, At: at,
			Text: transcript.Headline(transcript.Str(transcript.Lookup(pl, "last_agent_message")))})
	case transcript.StrEqual(typ, "turn_aborted"):
		reason := transcript.Str(transcript.Lookup(pl, "reason"))
		if reason == "" {
			reason = "aborted"
		}
		out = append(out, provider.Turn{Op: provider.TurnEnd, Key: turn, Kind: proto.KindInterrupted, At: at, Text: reason, HookSilent: true})
	}
	return out
}

// tokenCount reads a token_count event; its info is null before the first
// response.
func (p *turnParser) tokenCount(pl []transcript.Member, at time.Time, out []provider.Turn) []provider.Turn {
	var ok bool
	if p.info, ok = transcript.Members(transcript.Lookup(pl, "info"), p.info); !ok {
		return out
	}
	u := provider.Usage{
		Model:  transcript.Str(transcript.Lookup(p.info, "model")),
		Window: transcript.Int(transcript.Lookup(p.info, "model_context_window")),
	}
	if last, ok := transcript.Members(transcript.Lookup(p.info, "last_token_usage"), nil); ok {
		u.Context = transcript.Int(transcript.Lookup(last, "total_tokens"))
	}
	if u.Context <= 0 {
		return out
	}
	return append(out, provider.Turn{Op: provider.TurnUsage, At: at, Usage: u})
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

// locator finds a Codex rollout: the rollout of the native id (in the
// recent date folders, or everywhere when walking); otherwise the single
// unclaimed rollout of an interactive session in the working directory
// modified at or after the cutoff. It remembers the session_meta of the
// rollouts it read.
type locator struct {
	env   transcript.Env
	metas map[string]SessionMeta // by path
}

func (l *locator) Locate(_ context.Context, q provider.TurnQuery) string {
	if id := q.NativeID; id != "" {
		if p := FindRecentRollout(l.env, id, q.Now); p != "" || !q.Walk {
			return p
		}
		p, _ := FindRollout(l.env, id)
		return p
	}
	var found []string
	for _, dir := range recentDirs(l.env, q.Now) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			name := e.Name()
			if !IsRollout(name) || !strings.HasSuffix(name, ".jsonl") || !e.Type().IsRegular() {
				continue
			}
			p := filepath.Join(dir, name)
			if p == q.Except || (q.Taken != nil && q.Taken(p)) {
				continue
			}
			fi, err := e.Info()
			if err != nil || fi.ModTime().Before(q.Cutoff) {
				continue
			}
			meta, ok := l.metas[p]
			if !ok {
				if meta, err = ReadSessionMeta(p); err != nil {
					continue // not written yet: try again next time
				}
				l.metas[p] = meta
			}
			if meta.Interactive && samePath(meta.CWD, q.CWD) {
				found = append(found, p)
			}
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

func samePath(a, b string) bool {
	return a != "" && b != "" && filepath.Clean(a) == filepath.Clean(b)
}
