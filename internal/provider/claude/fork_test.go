package claude

import (
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

// Claude Code 2.1.328 (testdata/fork, recorded): --resume and --continue
// append to the session's own file; --fork-session writes a new file that
// starts with copies of the original's records and names the original in
// their requestSessionId.
func TestForkSession(t *testing.T) {
	const dir = "testdata/fork/projects/-tmp-rc-work/"
	orig := parseOne(t, dir+"11111111-2222-4333-8444-555555555555.jsonl")
	if orig.ForkedFrom != "" {
		t.Errorf("original: ForkedFrom %q, want none", orig.ForkedFrom)
	}
	if got := prompts(orig); len(got) != 3 || got[0] != "first prompt alpha" || got[2] != "third prompt charlie" {
		t.Errorf("original: prompts %q, want the first, resumed and continued ones", got)
	}
	for _, it := range orig.Items {
		if it.Inherited {
			t.Errorf("original: %s %q marked inherited", it.Kind, it.Text)
		}
	}

	fork := parseOne(t, dir+"b0d046f5-d157-4f39-9ac4-001ddb144fb9.jsonl")
	if fork.ID != "b0d046f5-d157-4f39-9ac4-001ddb144fb9" || fork.ForkedFrom != "11111111-2222-4333-8444-555555555555" {
		t.Fatalf("fork: ID %q ForkedFrom %q", fork.ID, fork.ForkedFrom)
	}
	var inherited, own []string
	for _, it := range fork.Items {
		if it.Kind != transcript.UserPrompt && it.Kind != transcript.AssistantText {
			continue
		}
		if it.Inherited {
			inherited = append(inherited, it.Text)
		} else {
			own = append(own, it.Text)
		}
	}
	wantInh := []string{"first prompt alpha", "reply number A", "second prompt bravo", "reply number B", "third prompt charlie", "reply number C"}
	if !slices.Equal(inherited, wantInh) || !slices.Equal(own, []string{"fourth prompt delta forked", "reply number D"}) {
		t.Errorf("fork: inherited %q, own %q", inherited, own)
	}
	if fork.PromptCount != 1 || orig.PromptCount != 3 {
		t.Errorf("prompts: fork %d (want its own 1), original %d (want 3)", fork.PromptCount, orig.PromptCount)
	}
	if fork.FirstPrompt != "first prompt alpha" {
		t.Errorf("fork: first prompt %q, want the conversation's first, as the file starts", fork.FirstPrompt)
	}
	// A summary parse knows the link too: the index stores it.
	ts := parse(t, dir+"b0d046f5-d157-4f39-9ac4-001ddb144fb9.jsonl", transcript.ParseOptions{SummaryOnly: true})
	if len(ts) != 1 || ts[0].ForkedFrom != fork.ForkedFrom || ts[0].PromptCount != 1 {
		t.Errorf("summary parse: %+v", ts)
	}
}

func prompts(t *transcript.Transcript) []string {
	var out []string
	for _, it := range t.Items {
		if it.Kind == transcript.UserPrompt {
			out = append(out, it.Text)
		}
	}
	return out
}
