package history

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// TestSubagents: a sub-agent is never listed or counted as a conversation
// of its own; a search that matches its text reports its parent; the
// parent lists it with the call that started it.
func TestSubagents(t *testing.T) {
	root := t.TempDir()
	src := &testSource{name: "fake", roots: []string{root}}
	writeSession(t, filepath.Join(root, "p.sess"), testSession{ID: "parent", Title: "the parent", Prompts: 2, Started: t0,
		Tools: []string{"Task", "Task"}, Replies: []string{"delegating the survey"}})
	writeSession(t, filepath.Join(root, "p/sub1.sess"), testSession{ID: "sub1", Title: "survey web", Prompts: 1, Started: t0.Add(time.Minute),
		Parent: "parent", ParentCall: "call-1", Replies: []string{"the quokka module renders pages"}})
	writeSession(t, filepath.Join(root, "p/sub2.sess"), testSession{ID: "sub2", Title: "survey api", Prompts: 1, Started: t0.Add(2 * time.Minute),
		Parent: "parent", ParentCall: "call-2", Replies: []string{"the quokka handlers answer"}})
	writeSession(t, filepath.Join(root, "o.sess"), testSession{ID: "orphan", Title: "lost", Prompts: 1, Started: t0,
		Parent: "gone", Replies: []string{"an orphan quokka"}})
	writeSession(t, filepath.Join(root, "other.sess"), testSession{ID: "other", Title: "another", Prompts: 1, Started: t0.Add(time.Hour)})
	x := openIndex(t, "v1")
	if _, err := x.Refresh(t.Context(), []transcript.Source{src}, transcript.Env{}, RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := x.List(t.Context(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	if want := []string{"other", "parent"}; !slices.Equal(ids, want) {
		t.Errorf("list %v, want %v", ids, want)
	}
	if n, err := x.Count(t.Context(), Query{}); err != nil || n != 2 {
		t.Errorf("count %d %v, want 2", n, err)
	}
	all, err := x.List(t.Context(), Query{IncludeSubagents: true})
	if err != nil || len(all) != 5 {
		t.Errorf("with sub-agents: %d %v", len(all), err)
	}

	// Both sub-agents match: the parent once, its snippet from the newest.
	hits := search(t, x, SearchQuery{Text: "quokka"})
	if got := refs(hits); !slices.Equal(got, []string{"fake:parent", "fake:orphan"}) {
		t.Fatalf("search: %v", got)
	}
	if hits[0].Subagent != "sub2" || !strings.Contains(hits[0].Snippet, "the quokka handlers answer") {
		t.Errorf("hit %+v", hits[0])
	}
	if got := refs(search(t, x, SearchQuery{Text: "quokka", Limit: 1})); !slices.Equal(got, []string{"fake:parent"}) {
		t.Errorf("limit 1: %v", got)
	}
	// The parent's own text wins over its sub-agents' in a better tier.
	if hits := search(t, x, SearchQuery{Text: "parent"}); len(hits) != 1 || hits[0].Subagent != "" {
		t.Errorf("parent's own match: %+v", hits)
	}

	r, err := x.Resolve(t.Context(), "fake:parent", []transcript.Source{src}, transcript.Env{})
	if err != nil {
		t.Fatal(err)
	}
	subs, err := x.Subagents(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]string
	for _, s := range subs {
		got = append(got, [2]string{s.Session.ID, s.Session.ParentCallID})
		if s.Source != r.Source {
			t.Errorf("source of %s", s.Session.ID)
		}
	}
	if want := [][2]string{{"sub1", "call-1"}, {"sub2", "call-2"}}; !slices.Equal(got, want) {
		t.Errorf("subagents %v, want %v", got, want)
	}
	tr, err := Load(t.Context(), subs[0], transcript.Env{})
	if err != nil || tr.ID != "sub1" {
		t.Errorf("load sub-agent: %v", err)
	}
}

// TestSubagentsClaudeFixture: the Claude Code fixture with two sub-agents
// lists one conversation; each sub-agent names the Agent call that
// started it.
func TestSubagentsClaudeFixture(t *testing.T) {
	fixture := sharedPath(t, "fixtures/claude/claude-code-log/minimal_showcase")
	home := t.TempDir()
	providertest.CopyTree(t, fixture, filepath.Join(home, ".claude/projects/-workspace-example-app"))
	env := transcript.Env{Home: home, Getenv: func(string) string { return "" }}
	x := openIndex(t, "v1")
	if _, err := x.Refresh(t.Context(), all.Sources(), env, RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := x.List(t.Context(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.ParentID != "" {
			t.Errorf("sub-agent listed: %s", s.ID)
		}
	}
	r, err := x.Resolve(t.Context(), "claude:55550000-0000-4000-8000-000000000001", all.Sources(), env)
	if err != nil {
		t.Fatal(err)
	}
	subs, err := x.Subagents(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, s := range subs {
		calls = append(calls, s.Session.ID+"="+s.Session.ParentCallID)
	}
	if want := []string{"showcol1=toolu_sc_showcol1", "showcol2=toolu_sc_showcol2"}; !slices.Equal(calls, want) {
		t.Errorf("sub-agents %v, want %v", calls, want)
	}
}

// sharedPath is path under the repository's copy of the fixtures
// (testdata/shared).
func sharedPath(t *testing.T, path string) string {
	t.Helper()
	p := filepath.Join(providertest.Shared, path)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}
