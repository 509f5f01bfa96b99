package codex

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

const (
	forkDir    = "testdata/fork/.codex/sessions/2026/12/02/"
	forkOrigID = "01a23606-ff46-72b3-8261-0e9bb2725698"
	forkOrig   = forkDir + "rollout-2026-12-02T09-12-37-" + forkOrigID + ".jsonl"
	forkID     = "01a23607-1fc3-7ba1-98e0-b55e6aed91f9"
	forkPath   = forkDir + "rollout-2026-12-02T09-12-46-" + forkID + ".jsonl"
)

func said(t *transcript.Transcript) (inherited, own []string) {
	for _, it := range t.Items {
		if it.Kind != transcript.UserPrompt && it.Kind != transcript.AssistantText {
			continue
		}
		if it.Inherited {
			inherited = append(inherited, it.Text)
		} else {
			own = append(own, it.Text)
		}
	}
	return inherited, own
}

// Codex 0.169.0 (testdata/fork, recorded): exec resume appends to the
// rollout; exec fork writes a rollout that copies nothing and points at
// the original's history with history_base.
func TestFork(t *testing.T) {
	orig := parseOne(t, forkOrig)
	inh, own := said(orig)
	if orig.ForkedFrom != "" || len(inh) != 0 {
		t.Errorf("original: ForkedFrom %q, inherited %q", orig.ForkedFrom, inh)
	}
	want := []string{"first prompt alpha", "reply number A", "second prompt bravo", "reply number B", "fourth prompt delta on the original", "reply number D"}
	if !slices.Equal(own, want) {
		t.Errorf("original: said %q, want %q", own, want)
	}

	fork := parseOne(t, forkPath)
	if fork.ID != forkID || fork.ForkedFrom != forkOrigID {
		t.Fatalf("fork: ID %q ForkedFrom %q", fork.ID, fork.ForkedFrom)
	}
	inh, own = said(fork)
	if !slices.Equal(inh, want[:4]) || !slices.Equal(own, []string{"third prompt charlie forked", "reply number C"}) {
		t.Errorf("fork: inherited %q, own %q", inh, own)
	}
	if fork.PromptCount != 1 || fork.FirstPrompt != "third prompt charlie forked" {
		t.Errorf("fork: %d prompts, first %q; want its own one", fork.PromptCount, fork.FirstPrompt)
	}
	// The fork's cumulative totals start at the original's 20 in / 10 out
	// at the fork point; its own response is 10 in / 5 out.
	wantUse := transcript.Usage{Input: 10, Output: 5}
	if fork.Usage == nil || *fork.Usage != wantUse {
		t.Errorf("fork usage %+v, want %+v", fork.Usage, wantUse)
	}
	var logged transcript.Usage
	for _, e := range fork.UsageLog {
		logged.Add(e.Usage)
	}
	if logged != wantUse {
		t.Errorf("fork usage log sums to %+v, want %+v", logged, wantUse)
	}
	if sum := fork.Usage.Total() + orig.Usage.Total(); sum != 4*15 {
		t.Errorf("original + fork = %d tokens, want the 4 responses' 60", sum)
	}
	for _, w := range fork.Warnings {
		t.Errorf("fork warning: %s", w)
	}
	// A summary parse reads only the fork's own file, and knows the link.
	ts := parse(t, forkPath, transcript.ParseOptions{SummaryOnly: true})
	if len(ts) != 1 || ts[0].ForkedFrom != forkOrigID || *ts[0].Usage != wantUse {
		t.Errorf("summary parse: %+v", ts)
	}
}

// A fork whose original is gone replays from its own records, says so,
// and still knows its original and its own usage.
func TestForkWithoutOriginal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".codex", "sessions", "2026", "12", "02")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(forkPath)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, filepath.Base(forkPath))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fork := parseOne(t, path)
	inh, own := said(fork)
	if fork.ForkedFrom != forkOrigID || len(inh) != 0 || len(own) != 2 {
		t.Errorf("ForkedFrom %q, inherited %q, own %q", fork.ForkedFrom, inh, own)
	}
	if len(fork.Warnings) != 1 || !strings.Contains(fork.Warnings[0], "not found") {
		t.Errorf("warnings %q, want one saying the original is not found", fork.Warnings)
	}
	if fork.Usage == nil || fork.Usage.Total() != 15 {
		t.Errorf("usage %+v, want the fork's own 15 tokens", fork.Usage)
	}
}
