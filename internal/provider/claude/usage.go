package claude

import (
	"strings"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

// usageOf reads an assistant message's model and the context its request
// used: input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens, the whole prompt, since Anthropic counts the
// cached part apart from input_tokens. Output tokens are left out: they
// join the context only with the next request, which reports them. The
// "<synthetic>" messages Claude Code writes itself (API errors) report
// nothing.
func usageOf(msg []transcript.Member) (provider.Usage, bool) {
	model := transcript.Str(transcript.Lookup(msg, "model"))
	if model == "<synthetic>" {
		return provider.Usage{}, false
	}
	u := provider.Usage{Model: model}
	if usage, ok := transcript.Members(transcript.Lookup(msg, "usage"), nil); ok {
		u.Context = transcript.Int(transcript.Lookup(usage, "input_tokens")) +
			transcript.Int(transcript.Lookup(usage, "cache_creation_input_tokens")) +
			transcript.Int(transcript.Lookup(usage, "cache_read_input_tokens"))
	}
	if u.Model == "" && u.Context == 0 {
		return provider.Usage{}, false
	}
	if w := contextWindow(u.Model); w > 0 && u.Context > 0 && u.Context <= w {
		// A context past the table's window proves the table wrong for
		// this session (a larger window asked for): unknown, not guessed.
		u.Window = w
	}
	return u, true
}

// contextWindows are the context windows of the Claude models whose
// window Anthropic's models overview states without options
// (https://platform.claude.com/docs/en/models/overview and the models'
// own pages, read 2026-12-02). Claude Code reports no window; a model not
// listed here gets none.
var contextWindows = map[string]int64{
	"claude-opus-5-5":  1_000_000,
	"claude-opus-5":    1_000_000,
	"claude-haiku-4-5": 200_000,
}

// contextWindow returns the window of model (an id, or an id with its
// -YYYYMMDD snapshot date), 0 when unknown.
func contextWindow(model string) int64 {
	if w, ok := contextWindows[model]; ok {
		return w
	}
	if i := strings.LastIndexByte(model, '-'); i > 0 && len(model)-i-1 == 8 && allDigits(model[i+1:]) {
		return contextWindows[model[:i]]
	}
	return 0
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
