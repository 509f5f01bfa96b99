package gemini

import (
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

// Gemini CLI 0.61.0 (testdata/resume, recorded): --resume appends to the
// chat's own file, so the three runs are one session.
func TestResumeAppends(t *testing.T) {
	tr := parseFile(t, "testdata/resume/.gemini/tmp/work/chats/session-2026-12-02T09-11-11111111.jsonl", transcript.ParseOptions{})
	var said []string
	for _, it := range tr.Items {
		if it.Kind == transcript.UserPrompt || it.Kind == transcript.AssistantText {
			said = append(said, it.Text)
		}
	}
	want := []string{"first prompt alpha", "reply number A", "second prompt bravo", "reply number B", "third prompt charlie", "reply number C"}
	if tr.ID != "11111111-2222-4333-8444-555555555555" || tr.PromptCount != 3 || !slices.Equal(said, want) {
		t.Errorf("ID %q, %d prompts, said %q; want one session of %q", tr.ID, tr.PromptCount, said, want)
	}
	if tr.ForkedFrom != "" || tr.CWD != "/tmp/rc/work" {
		t.Errorf("ForkedFrom %q, CWD %q", tr.ForkedFrom, tr.CWD)
	}
}
