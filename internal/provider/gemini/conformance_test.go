package gemini

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// conformance is the third-party fixtures and the chats the real CLI wrote.
var conformance = providertest.Conformance{
	Roots: []string{"fixtures/gemini", "research/real-cli/gemini/transcripts"},
	Match: func(p string) bool {
		sep := string(filepath.Separator)
		return (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".jsonl")) &&
			(strings.Contains(p, sep+"chats"+sep) || strings.Contains(p, "fixtures"))
	},
	Min: 1,
	Parse: func(t testing.TB, path string, opts transcript.ParseOptions) []*transcript.Transcript {
		return []*transcript.Transcript{parseFile(t.(*testing.T), path, opts)}
	},
	Check: func(t *testing.T, _ string, full []*transcript.Transcript) {
		if full[0].ID == "" || full[0].Provider != Name {
			t.Errorf("id %q, provider %q", full[0].ID, full[0].Provider)
		}
		providertest.CheckTitled(t, full[0])
	},
}

func TestConformance(t *testing.T) {
	type want struct {
		id, title, model   string
		prompts, tools     int
		usage              *transcript.Usage
		thinking, toolUses int
		cwd                string
	}
	expect := map[string]want{
		"agentsview/standard_session.json": {id: "sess-uuid-1", title: "Fix the login bug", prompts: 2},
		"agentsview/system_messages.json":  {id: "sess-uuid-3"},
		"agentsview/thinking_only.json":    {id: "sess-uuid-thinking", title: "Explain how this works", model: "gemini-2.5-pro", prompts: 1, thinking: 2},
		"agentsview/tool_calls.json":       {id: "sess-uuid-2", title: "Read this file", model: "gemini-2.5-pro", prompts: 1, tools: 1, thinking: 1, toolUses: 1},
		"entire-cli/attribution_session.json": {
			id: "attr-session-1", title: "Run the tests and read src/a.go", model: "gemini-2.5-flash", prompts: 2, tools: 4, thinking: 1, toolUses: 4,
			usage: &transcript.Usage{Input: 2650, Output: 230, CacheRead: 2200, Reasoning: 80},
		},
		"chats/session-2026-11-30T10-51-33333333.jsonl": {
			id: "33333333-2222-4333-8444-555555555555", title: "say hi", model: "gemini-3.1-pro-preview", prompts: 2, tools: 1, toolUses: 1,
			usage: &transcript.Usage{Input: 30, Output: 6}, cwd: "$SCRATCH/repo-gemini",
		},
		"chats/session-2026-11-30T10-52-33333333.jsonl": {id: "33333333-2222-4333-8444-555555555555", cwd: "$SCRATCH/repo-gemini"},
	}
	got := map[string]want{}
	for rel, ts := range conformance.Run(t) {
		full := ts[0]
		var thinking, uses int
		for _, it := range full.Items {
			switch it.Kind {
			case transcript.Thinking:
				thinking++
			case transcript.ToolUse:
				uses++
			}
		}
		got[path.Join(path.Base(path.Dir(rel)), path.Base(rel))] = want{
			id: full.ID, title: full.Title, model: full.Model, prompts: full.PromptCount, tools: full.ToolCallCount,
			usage: full.Usage, thinking: thinking, toolUses: uses, cwd: full.CWD,
		}
	}
	providertest.Expect(t, expect, got)
}

// A transcript cut off mid-line (the CLI was writing) parses with a warning.
func TestConformanceTruncated(t *testing.T) {
	for _, f := range conformance.Files(t) {
		if !strings.HasSuffix(f, ".jsonl") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cut := data[:len(data)*2/3]
			if cut[len(cut)-1] == '\n' {
				cut = cut[:len(cut)-1]
			}
			got := parseText(t, filepath.Base(f), string(cut))
			if len(got.Warnings) == 0 || !strings.Contains(got.Warnings[len(got.Warnings)-1], "malformed JSON") {
				t.Errorf("warnings = %q, want one for the cut line", got.Warnings)
			}
		})
	}
}
