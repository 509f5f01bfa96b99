package gemini

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/testing/providertest"
)

// TestUsageOfRecordedStates reads the model and prompt tokens of the
// gemini messages Gemini CLI 0.61.0 recorded (the reply is written twice:
// with its text, then with its tool calls). The preview model is not in
// Gemini CLI's table: no window.
func TestUsageOfRecordedStates(t *testing.T) {
	got := providertest.ParseUsage(t, Provider{}, filepath.Join("testdata", "states", statesFile))
	want := []string{
		`usage 03:20:23.972 "gemini-3.1-pro-preview" 10/0`,
		`usage 03:20:23.972 "gemini-3.1-pro-preview" 10/0`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestUsageLines(t *testing.T) {
	msg := func(model, tokens string) string {
		return `{"id":"m1","timestamp":"2026-11-30T10:00:00Z","type":"gemini","content":"hi","tokens":` + tokens + `,"model":"` + model + `"}`
	}
	tests := []struct {
		name string
		line string
		want []string
	}{
		{"known model", msg("gemini-2.5-pro", `{"input":120000,"output":20,"cached":100000,"thoughts":0,"tool":0,"total":120020}`),
			[]string{`usage 10:00:00.000 "gemini-2.5-pro" 120000/1048576`}},
		{"unknown model", msg("gemini-9-ultra", `{"input":5,"output":2}`),
			[]string{`usage 10:00:00.000 "gemini-9-ultra" 5/0`}},
		{"no tokens", msg("gemini-2.5-flash", `null`),
			[]string{`usage 10:00:00.000 "gemini-2.5-flash" 0/0`}},
		{"a user message", `{"id":"u1","timestamp":"2026-11-30T10:00:00Z","type":"user","content":[{"text":"<session_context>"}]}`, nil},
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
