package codex

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// TestConformance parses every Codex rollout in the third-party fixtures
// and what the real CLI wrote: no error, no panic, the summary scan agrees
// with the full parse, and files inspected by hand give the values below.
func TestConformance(t *testing.T) {
	parsed := providertest.Conformance{
		Roots: []string{"fixtures/codex", "research/real-cli/codex/transcripts/.codex/sessions"},
		Match: func(p string) bool { return strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json") },
		Min:   15,
		Parse: parse,
		Summary: func(s *transcript.Session) {
			s.Warnings = slices.DeleteFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "image") })
		},
		SummaryOptions: []cmp.Option{cmpopts.EquateEmpty()},
		Check: func(t *testing.T, rel string, full []*transcript.Transcript) {
			if len(full) > 1 {
				t.Fatalf("%d transcripts in one file", len(full))
			}
			if _, err := ReadSessionMeta(filepath.Join(providertest.Shared, rel)); err != nil && !strings.Contains(err.Error(), "no session_meta") {
				t.Fatalf("ReadSessionMeta: %v", err)
			}
			if len(full) == 1 && full[0].ID == "" {
				t.Fatal("no id")
			}
			// The usage log is the per-model usage, increase by increase,
			// each dated (stats dates and de-duplicates responses from it).
			if len(full) == 1 && len(full[0].UsageByModel) > 0 {
				sum := map[string]transcript.Usage{}
				for _, e := range full[0].UsageLog {
					if e.Time.IsZero() {
						t.Errorf("undated usage entry %+v", e)
					}
					u := sum[e.Model]
					u.Add(e.Usage)
					sum[e.Model] = u
				}
				if diff := cmp.Diff(full[0].UsageByModel, sum); diff != "" {
					t.Errorf("usage log by model (-UsageByModel +log):\n%s", diff)
				}
			}
		},
	}.Run(t)

	type want struct {
		id, title, first, model, parent string
		prompts, tools                  int
		usage                           *transcript.Usage
		warnings                        []string
	}
	real := "research/real-cli/codex/transcripts/.codex/sessions/2026/11/30/"
	cl := "fixtures/codex/claude-code-log/"
	cases := map[string]*want{
		real + "rollout-2026-11-30T10-56-27-01a22c19-5448-7d02-89e7-73b160cc00ef.jsonl": {
			id: "01a22c19-5448-7d02-89e7-73b160cc00ef", title: "say hi", first: "say hi", model: "gpt-fake",
			prompts: 3, tools: 2, usage: &transcript.Usage{Input: 40, Output: 8},
		},
		real + "rollout-2026-11-30T10-45-04-01a22c0e-d041-74f3-b87b-104fada8e2f6.jsonl": {
			id: "01a22c0e-d041-74f3-b87b-104fada8e2f6", title: "say hi", first: "say hi", model: "gpt-6.1-sol", prompts: 3,
		},
		// The capture kept only the first 8 lines, before the first prompt.
		real + "rollout-2026-11-30T10-56-09-01a22c18-f9a7-7cb0-aed7-af74b3099326.jsonl": nil,
		cl + "sessions/2026/01/02/rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl": {
			id: "11111111-1111-4111-8111-111111111111", title: "List the synthetic files.", first: "List the synthetic files.",
			model: "synthetic-model", prompts: 1, tools: 3,
		},
		cl + "sessions/2026/01/03/rollout-2026-01-03T04-05-10-33333333-3333-4333-8333-333333333333.jsonl": {
			id: "33333333-3333-4333-8333-333333333333", parent: "22222222-2222-4222-8222-222222222222",
			title: "Inspect fixtures.", first: "Inspect fixtures.", prompts: 1,
		},
		cl + "sessions/2026/01/03/rollout-2026-01-03T04-05-06-22222222-2222-4222-8222-222222222222.jsonl": {
			id: "22222222-2222-4222-8222-222222222222", title: "Spawn a synthetic researcher.", first: "Spawn a synthetic researcher.", prompts: 1, tools: 1,
		},
		cl + "sessions/rollout-44444444-4444-4444-8444-444444444444.jsonl": {
			id: "44444444-4444-4444-8444-444444444444", title: "Open the synthetic legacy session.", first: "Open the synthetic legacy session.", prompts: 1,
		},
		cl + "archived_sessions/rollout-55555555-5555-4555-8555-555555555555.jsonl": {
			id: "55555555-5555-4555-8555-555555555555", title: "Archived synthetic prompt.", first: "Archived synthetic prompt.", prompts: 1,
		},
		cl + "malformed/rollout-66666666-6666-4666-8666-666666666666.jsonl": {
			id: "66666666-6666-4666-8666-666666666666", title: "Safe line before malformed input.", first: "Safe line before malformed input.", prompts: 1,
			warnings: []string{"line 3: malformed JSON; skipped"},
		},
		"fixtures/codex/ccusage/sessions/project-alpha/session-alpha.jsonl": {
			id: "session-alpha", model: "gpt-5.3-codex", usage: &transcript.Usage{Input: 2750, CacheRead: 750, Output: 425, Reasoning: 275},
		},
		"fixtures/codex/agentsview/standard_session.jsonl": {id: "abc-123", title: "Add rate limiting", first: "Add rate limiting", prompts: 1},
		"fixtures/codex/agentsview/function_calls.jsonl":   {id: "fc-1", title: "Run the tests", first: "Run the tests", prompts: 1, tools: 2},
		"fixtures/codex/agent-deck/resumed.jsonl": {
			id: "00000000-0000-4000-8000-00000000c0de", title: "Continue the resumed task", first: "Continue the resumed task", prompts: 1,
			usage: &transcript.Usage{Input: 200},
		},
	}
	got := map[string]*want{}
	for rel, ts := range parsed {
		got[rel] = nil
		if len(ts) == 1 {
			tr := ts[0]
			got[rel] = &want{tr.ID, tr.Title, tr.FirstPrompt, tr.Model, tr.ParentID, tr.PromptCount, tr.ToolCallCount, tr.Usage, tr.Warnings}
		}
	}
	providertest.Expect(t, cases, got)
}
