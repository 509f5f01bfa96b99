package history

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// TestForks: over a home holding the recorded Claude Code 2.1.328 and
// Codex 0.169.0 forks (the providers' testdata/fork), each fork is a row
// of its own naming its original; a search finds what was said before the
// fork in the original only, and what was said after it in the fork only;
// a fork loads as the whole conversation, the original's part once and
// marked inherited.
func TestForks(t *testing.T) {
	const (
		claudeOrig = "11111111-2222-4333-8444-555555555555"
		claudeFork = "b0d046f5-d157-4f39-9ac4-001ddb144fb9"
		codexOrig  = "01a23606-ff46-72b3-8261-0e9bb2725698"
		codexFork  = "01a23607-1fc3-7ba1-98e0-b55e6aed91f9"
	)
	home := t.TempDir()
	providertest.CopyTree(t, "../provider/claude/testdata/fork/projects", filepath.Join(home, ".claude/projects"))
	providertest.CopyTree(t, "../provider/codex/testdata/fork/.codex", filepath.Join(home, ".codex"))
	env := transcript.Env{Home: home, Getenv: func(string) string { return "" }}
	x := openIndex(t, "v1")
	if _, err := x.Refresh(t.Context(), all.Sources(), env, RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := x.List(t.Context(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	forked := map[string]string{}
	for _, s := range list {
		forked[s.Provider+":"+s.ID] = s.ForkedFrom
	}
	want := map[string]string{
		"claude:" + claudeOrig: "", "claude:" + claudeFork: claudeOrig,
		"codex:" + codexOrig: "", "codex:" + codexFork: codexOrig,
	}
	if len(forked) != len(want) {
		t.Errorf("listed %v, want %v", forked, want)
	}
	for ref, from := range want {
		if got, ok := forked[ref]; !ok || got != from {
			t.Errorf("%s: listed %v, forked from %q; want forked from %q", ref, ok, got, from)
		}
	}

	for _, c := range []struct{ query, want string }{
		{"bravo", "claude:" + claudeOrig},          // said before the Claude fork
		{"delta forked", "claude:" + claudeFork},   // said after it
		{"reply number B", "claude:" + claudeOrig}, // a reply before it
	} {
		if got := refs(search(t, x, SearchQuery{Text: c.query, Provider: "claude"})); !slices.Equal(got, []string{c.want}) {
			t.Errorf("search %q: %v, want %s", c.query, got, c.want)
		}
	}
	for _, c := range []struct{ query, want string }{
		{"bravo", "codex:" + codexOrig},
		{"charlie forked", "codex:" + codexFork},
		{"delta on the original", "codex:" + codexOrig},
	} {
		if got := refs(search(t, x, SearchQuery{Text: c.query, Provider: "codex"})); !slices.Equal(got, []string{c.want}) {
			t.Errorf("search %q: %v, want %s", c.query, got, c.want)
		}
	}

	for _, c := range []struct {
		ref       string
		inherited []string
		own       []string
	}{
		{"claude:" + claudeFork, []string{"first prompt alpha", "second prompt bravo", "third prompt charlie"}, []string{"fourth prompt delta forked"}},
		{"codex:" + codexFork, []string{"first prompt alpha", "second prompt bravo"}, []string{"third prompt charlie forked"}},
		{"codex:" + codexOrig, nil, []string{"first prompt alpha", "second prompt bravo", "fourth prompt delta on the original"}},
	} {
		r, err := x.Resolve(t.Context(), c.ref, all.Sources(), env)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Load(t.Context(), r, env)
		if err != nil {
			t.Fatal(err)
		}
		var inh, own []string
		for _, it := range tr.Items {
			if it.Kind != transcript.UserPrompt {
				continue
			}
			if it.Inherited {
				inh = append(inh, it.Text)
			} else {
				own = append(own, it.Text)
			}
		}
		if !slices.Equal(inh, c.inherited) || !slices.Equal(own, c.own) {
			t.Errorf("%s loads inherited %q, own %q; want %q, %q", c.ref, inh, own, c.inherited, c.own)
		}
	}
}

// TestGeminiResumeLater: Gemini CLI 0.61.0 resumed in a later minute than
// the chat started writes a second file of the same session id holding
// nothing said (the provider's testdata/resume-later, recorded) and goes
// on in the first. The conversation is one row, and its id opens the file
// that holds it, also when the empty file is the newer one (a resume with
// nothing said: the recording's first file cut before the resumed turn).
func TestGeminiResumeLater(t *testing.T) {
	const id = "11111111-2222-4333-8444-555555555555"
	for _, c := range []struct {
		name    string
		keep    int // lines of the conversation's file kept, 0: all
		prompts int
	}{{"resumed turn", 0, 2}, {"nothing said after the resume", 6, 1}} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			chats := filepath.Join(home, ".gemini/tmp/work/chats")
			providertest.CopyTree(t, "../provider/gemini/testdata/resume-later/.gemini", filepath.Join(home, ".gemini"))
			conv := filepath.Join(chats, "session-2026-12-02T09-39-11111111.jsonl")
			if c.keep > 0 {
				b, err := os.ReadFile(conv)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.SplitAfter(string(b), "\n")
				if err := os.WriteFile(conv, []byte(strings.Join(lines[:c.keep], "")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := transcript.Env{Home: home, Getenv: func(string) string { return "" }}
			x := openIndex(t, "v1")
			if _, err := x.Refresh(t.Context(), all.Sources(), env, RefreshOptions{}); err != nil {
				t.Fatal(err)
			}
			list, err := x.List(t.Context(), Query{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].ID != id || list[0].Path != conv || list[0].PromptCount != c.prompts {
				t.Fatalf("list %+v, want the one conversation in %s with %d prompts", list, conv, c.prompts)
			}
			for _, ref := range []string{"gemini:" + id, id[:8]} {
				r, err := x.Resolve(t.Context(), ref, all.Sources(), env)
				if err != nil {
					t.Fatal(err)
				}
				if r.Session.Path != conv {
					t.Errorf("%s resolves to %s, want %s", ref, r.Session.Path, conv)
				}
			}
		})
	}
}
