package opencode

import (
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// TestConformance parses the third-party export fixture and the exports the
// real CLI (1.18.33) wrote; the database it wrote is covered by
// testdata/opencode.sql, which holds the same two sessions.
func TestConformance(t *testing.T) {
	parsed := providertest.Conformance{
		Roots: []string{"fixtures/opencode", "research/real-cli/opencode/transcripts"},
		Match: func(p string) bool {
			return strings.HasSuffix(p, ".json") && !strings.HasSuffix(p, "model.json") || strings.HasSuffix(p, ".db")
		},
		Parse: parse,
		Check: func(t *testing.T, _ string, full []*transcript.Transcript) {
			for _, tr := range full {
				providertest.CheckTitled(t, tr)
				if len(tr.Warnings) != 0 {
					t.Errorf("warnings %q", tr.Warnings)
				}
			}
		},
	}.Run(t)
	type want struct {
		id, title, model string
		prompts, tools   int
		usage            *transcript.Usage
		cost             float64
	}
	expect := map[string]want{
		"attribution_export.json": {id: "ses_attr", title: "attribution fixture", model: "claude-sonnet-4-5", prompts: 3, tools: 4,
			usage: &transcript.Usage{Input: 1260, Output: 850, CacheRead: 17000, CacheWrite: 900, Reasoning: 180}, cost: 0.0189},
		"export-ses.json":         {id: realA, title: "say hi", model: "claude-sonnet-4-6", prompts: 1, usage: &transcript.Usage{}},
		"export-ses-fakeapi.json": {id: realB, title: "hi", model: "claude-sonnet-4-6", prompts: 2, tools: 1, usage: &transcript.Usage{Input: 30, Output: 15}, cost: 0.000315},
	}
	got := map[string]want{}
	for rel, ts := range parsed {
		if len(ts) > 0 {
			s := ts[0]
			got[path.Base(rel)] = want{id: s.ID, title: s.Title, model: s.Model, prompts: s.PromptCount, tools: s.ToolCallCount, usage: s.Usage, cost: s.CostUSD}
		}
	}
	providertest.Expect(t, expect, got, cmpopts.EquateApprox(0, 1e-9))
}
