package codex

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/testing/providertest"
)

// TestUsageOfRollout reads the model of every turn_context and the context
// and window of every token_count Codex 0.169.0 wrote (research/real-cli):
// the window is Codex's own report.
func TestUsageOfRollout(t *testing.T) {
	got := providertest.ParseUsage(t, Provider{}, filepath.Join("testdata", "turns", "codex-01a22c19.jsonl"))
	want := []string{
		`usage 10:56:38.206 "gpt-fake" 0/0`,
		`usage 10:56:38.332 "" 12/258400`,
		`usage 10:56:46.275 "gpt-fake" 0/0`,
		`usage 10:56:46.595 "" 12/258400`,
		`usage 10:56:46.636 "" 12/258400`,
		`usage 10:56:58.617 "gpt-fake" 0/0`,
		`usage 10:57:11.209 "" 12/258400`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestUsageLines(t *testing.T) {
	const ts = `"timestamp":"2026-11-30T10:00:00Z"`
	count := func(info string) string {
		return `{` + ts + `,"type":"event_msg","payload":{"type":"token_count","info":` + info + `,"rate_limits":null}}`
	}
	tests := []struct {
		name string
		line string
		want []string
	}{
		{"last usage, not the total", count(`{"total_token_usage":{"total_tokens":90000},"last_token_usage":{"input_tokens":30000,"cached_input_tokens":20000,"output_tokens":500,"total_tokens":30500},"model_context_window":258400}`),
			[]string{`usage 10:00:00.000 "" 30500/258400`}},
		{"info model", count(`{"model":"gpt-6","last_token_usage":{"total_tokens":7},"model_context_window":400000}`),
			[]string{`usage 10:00:00.000 "gpt-6" 7/400000`}},
		{"null info before the first reply", count(`null`), nil},
		{"no window reported", count(`{"last_token_usage":{"total_tokens":7}}`),
			[]string{`usage 10:00:00.000 "" 7/0`}},
		{"turn context", `{` + ts + `,"type":"turn_context","payload":{"turn_id":"t1","cwd":"/x","model":"gpt-6.1-sol"}}`,
			[]string{`usage 10:00:00.000 "gpt-6.1-sol" 0/0`}},
		{"nested turn context", `{` + ts + `,"type":"turn_context","payload":{"turn_id":"t2","root_turn_id":"t1","model":"gpt-mini"}}`, nil},
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
