package claude

import (
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// TestConformance parses every Claude Code transcript in the third-party
// fixtures and in what the real CLI wrote: no error, no panic, the summary
// scan agrees with the full parse, and files inspected by hand give the
// values below.
func TestConformance(t *testing.T) {
	parsed := providertest.Conformance{
		Roots: []string{"fixtures/claude", "research/real-cli/claude/transcripts"},
		Match: func(p string) bool { return strings.HasSuffix(p, ".jsonl") },
		Min:   20,
		Parse: parse,
		Summary: func(s *transcript.Session) {
			s.Warnings = slices.DeleteFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "image") })
		},
		Check: func(t *testing.T, _ string, full []*transcript.Transcript) {
			if len(full) > 1 {
				t.Fatalf("%d transcripts in one file", len(full))
			}
			for _, tr := range full {
				if tr.ID == "" || tr.PromptCount < 0 {
					t.Fatalf("bad session %+v", tr.Session)
				}
				for _, it := range tr.Items {
					if it.Kind == transcript.ToolUse && it.Tool == "" && it.RawTool != "" {
						t.Fatalf("tool use without canonical name: %+v", it)
					}
				}
			}
		},
	}.Run(t)

	type want struct {
		id, title, first, model, parent string
		prompts, tools, compactions     int
		usage                           *transcript.Usage
		warnings                        []string
	}
	real := "research/real-cli/claude/transcripts/.claude/projects/-SCRATCH-repo-claude/"
	cases := map[string]want{
		real + "22222222-2222-4333-8444-555555555555.jsonl": {
			id: "22222222-2222-4333-8444-555555555555", title: "say hi", first: "say hi", model: "claude-opus-5-5",
			prompts: 4, tools: 4, usage: &transcript.Usage{Input: 70, Output: 35},
		},
		real + "d374eff7-6681-449d-ac7d-e8ad01a2744d.jsonl": {
			id: "d374eff7-6681-449d-ac7d-e8ad01a2744d", title: "say hi", first: "say hi", prompts: 1,
		},
		real + "66666666-2222-4333-8444-555555555555.jsonl": {
			id: "66666666-2222-4333-8444-555555555555", title: "please write a file", first: "please write a file", prompts: 1,
		},
		"fixtures/claude/agent-deck/session_titled.jsonl": {id: "aaa", title: "Great Title", first: "first question", prompts: 1},
		"fixtures/claude/agent-deck/session_corrupt.jsonl": {
			id: "session_corrupt", title: "survived", first: "survived", prompts: 1,
			warnings: []string{"line 1: malformed JSON; skipped"},
		},
		"fixtures/claude/agent-deck/head.jsonl": {
			id: "00000000-0000-4000-8000-000000005ec5", title: "Summarise the fixture project.", first: "Summarise the fixture project.",
			model: "claude-opus-4-7", prompts: 3,
			usage: &transcript.Usage{Input: 18, Output: 270, CacheRead: 57166, CacheWrite: 24230},
		},
		"fixtures/claude/ccusage/projects/project-alpha/session-alpha/chat.jsonl": {
			id: "session-alpha", model: "claude-sonnet-4-20250514",
			usage: &transcript.Usage{Input: 600, Output: 250, CacheRead: 70, CacheWrite: 75},
		},
		"fixtures/claude/claude-code-log/edge_cases.jsonl": {
			id: "edge_cases", model: "claude-sonnet-4", prompts: 4, tools: 3,
			title:    "Tested various edge cases including markdown formatting, long text, tool errors, system messages, c…",
			first:    "Here's a message with some **markdown** formatting, `inline code`, and even a [link](https://example.com). Let's see how it renders!",
			usage:    &transcript.Usage{Input: 488, Output: 435},
			warnings: []string{"line 13: not a JSON object; skipped", "line 15: not a JSON object; skipped", "line 16: not a JSON object; skipped"},
		},
		"fixtures/claude/claude-code-log/dag_compact_after_rewind.jsonl": {
			id: "s1", title: "Start", first: "Start", model: "claude-sonnet-4-20250514", prompts: 5, compactions: 1,
			usage: &transcript.Usage{Input: 50, Output: 25},
		},
		"fixtures/claude/claude-code-log/minimal_showcase/55550000-0000-4000-8000-000000000001/subagents/agent-showcol1.jsonl": {
			id: "showcol1", parent: "55550000-0000-4000-8000-000000000001", title: "Survey the web module",
			first: "Survey src/web and report its layout, with a screenshot.", model: "claude-haiku-4-5-20251001", prompts: 1,
			usage: &transcript.Usage{Input: 120, Output: 40},
		},
		"fixtures/claude/claude-code-log/minimal_showcase/55550000-0000-4000-8000-000000000001.jsonl": {
			id: "55550000-0000-4000-8000-000000000001", model: "claude-haiku-4-5-20251001", prompts: 1, tools: 5,
			title: "Give me a tour of the repository: its structure, then compare the web and jobs modules side by side.",
			first: "Give me a tour of the repository: its structure, then compare the web and jobs modules side by side.",
			usage: &transcript.Usage{Input: 600, Output: 200},
		},
	}
	got := map[string]want{}
	for rel, ts := range parsed {
		if len(ts) == 1 {
			tr := ts[0]
			got[rel] = want{
				id: tr.ID, title: tr.Title, first: tr.FirstPrompt, model: tr.Model, parent: tr.ParentID,
				prompts: tr.PromptCount, tools: tr.ToolCallCount, compactions: len(tr.Compactions), usage: tr.Usage, warnings: tr.Warnings,
			}
		}
	}
	providertest.Expect(t, cases, got)
}
