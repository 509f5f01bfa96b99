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

// Resumed in a later minute (testdata/resume-later, recorded), the chat
// goes on in its file and a second file of the same id holds nothing said.
func TestResumeLaterMinute(t *testing.T) {
	const dir = "testdata/resume-later/.gemini/tmp/work/chats/"
	conv := parseFile(t, dir+"session-2026-12-02T09-39-11111111.jsonl", transcript.ParseOptions{})
	if conv.ID != "11111111-2222-4333-8444-555555555555" || conv.PromptCount != 2 {
		t.Errorf("conversation: ID %q, %d prompts; want 2", conv.ID, conv.PromptCount)
	}
	stub := parseFile(t, dir+"session-2026-12-02T09-40-11111111.jsonl", transcript.ParseOptions{})
	if stub.ID != conv.ID || stub.PromptCount != 0 || stub.ToolCallCount != 0 || len(stub.Items) != 0 || stub.Usage != nil {
		t.Errorf("the resume's new file: ID %q, %d prompts, %d tool calls, %d items, usage %v; want the same id and nothing said",
			stub.ID, stub.PromptCount, stub.ToolCallCount, len(stub.Items), stub.Usage)
	}
}
