package claude

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/testing/providertest"
)

// TestUsageOfTranscript reads the model and context of every assistant
// record Claude Code 2.1.328 wrote (one per content block, each with its
// message's usage), against the fake model of research/real-cli.
func TestUsageOfTranscript(t *testing.T) {
	got := providertest.ParseUsage(t, Provider{}, filepath.Join("testdata", "turns", "claude-22222222.jsonl"))
	if len(got) != 11 {
		t.Fatalf("got %d usage records, want 11: %q", len(got), got)
	}
	want := []string{
		`usage 10:50:11.171 "claude-opus-5-5" 10/1000000`,
		`usage 10:50:11.182 "claude-opus-5-5" 10/1000000`,
	}
	if diff := cmp.Diff(want, got[:2]); diff != "" {
		t.Errorf("first usage records (-want +got):\n%s", diff)
	}
	// The session whose only reply is the API error's synthetic message
	// reports nothing.
	if got := providertest.ParseUsage(t, Provider{}, filepath.Join("testdata", "turns", "claude-d374eff7.jsonl")); len(got) != 0 {
		t.Errorf("usage of a failed session: %q", got)
	}
}

func TestUsageLines(t *testing.T) {
	const ts = `"timestamp":"2026-11-30T10:00:00Z"`
	asst := func(model, usage string) string {
		return `{"type":"assistant","message":{"role":"assistant","model":"` + model + `","content":[{"type":"text","text":"x"}],"usage":` + usage + `},` + ts + `}`
	}
	tests := []struct {
		name string
		line string
		want []string
	}{
		{"cache counts", asst("claude-opus-5-5", `{"input_tokens":3,"cache_creation_input_tokens":1200,"cache_read_input_tokens":40000,"output_tokens":900}`),
			[]string{`usage 10:00:00.000 "claude-opus-5-5" 41203/1000000`}},
		{"snapshot date", asst("claude-haiku-4-5-20251001", `{"input_tokens":50000}`),
			[]string{`usage 10:00:00.000 "claude-haiku-4-5-20251001" 50000/200000`}},
		{"unknown model has no window", asst("claude-sonnet-9", `{"input_tokens":5}`),
			[]string{`usage 10:00:00.000 "claude-sonnet-9" 5/0`}},
		{"past the table's window", asst("claude-haiku-4-5", `{"input_tokens":250000}`),
			[]string{`usage 10:00:00.000 "claude-haiku-4-5" 250000/0`}},
		{"no usage", asst("claude-opus-5", `null`),
			[]string{`usage 10:00:00.000 "claude-opus-5" 0/0`}},
		{"synthetic", asst("<synthetic>", `{"input_tokens":0}`), nil},
		{"sidechain", `{"isSidechain":true,"type":"assistant","message":{"model":"claude-opus-5","usage":{"input_tokens":9}},` + ts + `}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := providertest.LineUsage(t, Provider{}, tt.line)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}
