package opencode

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/musterhq/muster/internal/transcript"
)

// shared is ../shared beside the checkout (CI), seen from this package.
const shared = "../../../../shared"

// TestConformance parses the third-party export fixture and the exports the
// real CLI (1.18.33) wrote; the database it wrote is covered by
// testdata/opencode.sql, which holds the same two sessions.
func TestConformance(t *testing.T) {
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("no %s beside the checkout: %v", shared, err)
	}
	var files []string
	for _, root := range []string{
		filepath.Join(shared, "fixtures", "opencode"),
		filepath.Join(shared, "research", "real-cli", "opencode", "transcripts"),
	} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".json") && !strings.HasSuffix(p, "model.json") || strings.HasSuffix(p, ".db")) {
				files = append(files, p)
			}
			return nil
		})
	}
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
	seen := 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			full := parse(t, f, transcript.ParseOptions{})
			sum := parse(t, f, transcript.ParseOptions{SummaryOnly: true})
			for i := range full {
				if diff := cmp.Diff(full[i].Session, sum[i].Session); diff != "" {
					t.Errorf("summary differs (-full +summary):\n%s", diff)
				}
				if full[i].PromptCount > 0 && (full[i].FirstPrompt == "" || full[i].Title == "") {
					t.Errorf("%d prompts but first prompt %q, title %q", full[i].PromptCount, full[i].FirstPrompt, full[i].Title)
				}
				if len(full[i].Warnings) != 0 {
					t.Errorf("warnings %q", full[i].Warnings)
				}
			}
			w, ok := expect[filepath.Base(f)]
			if !ok {
				return
			}
			seen++
			s := full[0]
			got := want{id: s.ID, title: s.Title, model: s.Model, prompts: s.PromptCount, tools: s.ToolCallCount, usage: s.Usage, cost: s.CostUSD}
			if diff := cmp.Diff(w, got, cmp.AllowUnexported(want{}), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if seen != len(expect) {
		t.Errorf("checked %d of the %d files inspected by hand", seen, len(expect))
	}
}
