package replay

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/transcript"
)

// TestSubagentsNested: claude-code-log's showcase session with its two
// subagents (<session>/subagents/agent-*.jsonl), parsed by the Claude
// parser, replays each subagent under the Agent call that started it.
func TestSubagentsNested(t *testing.T) {
	path := filepath.Join(sharedDir(t), "fixtures", "claude", "claude-code-log", "minimal_showcase", "55550000-0000-4000-8000-000000000001.jsonl")
	env := testEnv(t, nil)
	parent := parseFixture(t, "claude", path, env)
	subs := LoadSubagents(context.Background(), all.Source("claude"), env, parent)
	if len(subs) != 2 {
		t.Fatalf("%d subagents, want 2", len(subs))
	}
	out, err := HTML(parent, Options{Subagents: subs})
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	if n := strings.Count(page, `<details class="subagent">`); n != 2 {
		t.Fatalf("%d nested subagents, want 2", n)
	}
	// Each sits inside its own Agent call: the call's head comes right
	// before its subagent, and the subagents' own words are in them.
	for _, want := range []string{"Survey src/jobs and list its scheduled jobs.", "Subagent: "} {
		if !strings.Contains(page, want) {
			t.Errorf("missing %q", want)
		}
	}
	calls := strings.Split(page, `<span class="name">Task</span>`)
	if len(calls) != 3 {
		t.Fatalf("%d Task calls, want 2", len(calls)-1)
	}
	for i, c := range calls[1:] {
		end := strings.Index(c, `<div class="tool `)
		if end < 0 {
			end = len(c)
		}
		if !strings.Contains(c[:end], `<details class="subagent">`) {
			t.Errorf("Task call %d has no subagent under it", i+1)
		}
	}
	if strings.Contains(page, "unlinked") {
		t.Error("a subagent was not linked to its call")
	}
	// Without subagents the page shows none.
	out, _ = HTML(parent, Options{})
	if strings.Contains(string(out), `<details class="subagent">`) {
		t.Error("a subagent appears without being given")
	}
}

func TestSubagentMatching(t *testing.T) {
	task := func(id, prompt string) []transcript.Item {
		in, _ := json.Marshal(map[string]string{"description": "d" + id, "prompt": prompt})
		return []transcript.Item{{Kind: transcript.ToolUse, Tool: "Task", CallID: id, Input: in}, {Kind: transcript.ToolResult, CallID: id, Text: "done"}}
	}
	parent := &transcript.Transcript{Items: append(append([]transcript.Item{{Kind: transcript.UserPrompt, Text: "go"}}, task("1", "alpha job")...), task("2", "beta job")...)}
	sub := func(prompt, reply string) *transcript.Transcript {
		return &transcript.Transcript{Session: transcript.Session{Title: prompt}, Items: []transcript.Item{{Kind: transcript.UserPrompt, Text: prompt}, {Kind: transcript.AssistantText, Text: reply}}}
	}
	// Given in the other order, matched by prompt; a third has no call.
	out, _ := HTML(parent, Options{Subagents: []*transcript.Transcript{sub("beta job", "BETA-REPLY"), sub("alpha job", "ALPHA-REPLY"), sub("gamma", "GAMMA-REPLY")}})
	page := string(out)
	a, b, g := strings.Index(page, "ALPHA-REPLY"), strings.Index(page, "BETA-REPLY"), strings.Index(page, "GAMMA-REPLY")
	call2 := strings.Index(page, `<span class="subject">d2</span>`)
	if a < 0 || b < 0 || g < 0 || call2 < 0 || !(a < call2 && call2 < b && b < g) {
		t.Errorf("subagents misplaced: alpha %d, call 2 %d, beta %d, gamma %d", a, call2, b, g)
	}
	if !strings.Contains(page, "A subagent whose call is not in the transcript") {
		t.Error("the subagent without a call is not listed")
	}
}

// TestRewindAndCompactionMarked: claude-code-log's rewind-then-compact
// fixture replays the second attempt marked as a rewind and the
// compaction marked, without the compaction summary as a prompt.
func TestRewindAndCompactionMarked(t *testing.T) {
	path := filepath.Join(sharedDir(t), "fixtures", "claude", "claude-code-log", "dag_compact_after_rewind.jsonl")
	tr := parseFixture(t, "claude", path, testEnv(t, nil))
	var rewinds []string
	for _, it := range tr.Items {
		if it.Rewind {
			rewinds = append(rewinds, it.Text)
		}
	}
	if len(rewinds) != 1 || rewinds[0] != "Second attempt" {
		t.Fatalf("rewound prompts %q, want [Second attempt]", rewinds)
	}
	out, err := HTML(tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	r := strings.Index(page, `<div class="rewind">`)
	if strings.Count(page, `<div class="rewind">`) != 1 || r < 0 || r > strings.Index(page, "Second attempt") || r < strings.Index(page, "First answer") {
		t.Error("the rewind is not marked once, between the abandoned branch and its replacement")
	}
	if !strings.Contains(page, `<div class="compaction">Context compacted`) || strings.Contains(page, "This session is being continued") {
		t.Error("the compaction is not marked, or its summary is shown as a prompt")
	}
}
