package replay

import (
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

// TestFork: a fork's page shows what it inherited once, then the fork
// mark naming the original, then its own turns; the original's id is in
// the header.
func TestFork(t *testing.T) {
	for _, c := range []struct {
		name  string
		first transcript.Item // the fork's first own item
		head  string
	}{
		{"prompt", transcript.Item{Kind: transcript.UserPrompt, Text: "own prompt"}, "Prompt 2"},
		{"reply", transcript.Item{Kind: transcript.AssistantText, Text: "own prompt"}, "After the fork"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := &transcript.Transcript{Session: transcript.Session{Provider: "claude", ID: "fork-1", ForkedFrom: "orig-1", Title: "t"}}
			tr.Items = []transcript.Item{
				{Kind: transcript.UserPrompt, Text: "inherited prompt", Inherited: true},
				{Kind: transcript.AssistantText, Text: "inherited reply", Inherited: true},
				c.first,
				{Kind: transcript.AssistantText, Text: "own reply"},
			}
			page, err := HTML(tr, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := string(page)
			mark := strings.Index(s, "⑂ Forked from orig-1 here")
			if mark < 0 || strings.Count(s, "⑂ Forked from") != 1 {
				t.Fatalf("want one fork mark:\n%s", s)
			}
			if !strings.Contains(s, "forked from <b>orig-1</b>") {
				t.Error("header does not name the original")
			}
			inh, own := strings.Index(s, "inherited reply"), strings.Index(s, "own prompt")
			if inh < 0 || inh > mark || own < mark || strings.Count(s, "inherited prompt") != 1 {
				t.Errorf("order: inherited at %d, mark at %d, own at %d", inh, mark, own)
			}
			if h := strings.LastIndex(s[:mark], c.head); h < 0 {
				t.Errorf("the fork's scene is not headed %q", c.head)
			}
		})
	}
	// Not a fork: no mark.
	page, err := HTML(&transcript.Transcript{Session: transcript.Session{Provider: "claude", ID: "x"},
		Items: []transcript.Item{{Kind: transcript.UserPrompt, Text: "p"}}}, Options{})
	if err != nil || strings.Contains(string(page), "Forked from") || strings.Contains(string(page), "forked from <b>") {
		t.Errorf("a conversation that is no fork is marked as one (%v)", err)
	}
}

// TestForkPaged: split into pages, the fork mark is on the page whose
// first scene starts at the fork point, and on no other.
func TestForkPaged(t *testing.T) {
	tr := &transcript.Transcript{Session: transcript.Session{Provider: "codex", ID: "fork-1", ForkedFrom: "orig-1"}}
	for _, p := range []string{"one", "two"} {
		tr.Items = append(tr.Items, transcript.Item{Kind: transcript.UserPrompt, Text: "inherited " + p, Inherited: true},
			transcript.Item{Kind: transcript.AssistantText, Text: "reply " + p, Inherited: true})
	}
	tr.Items = append(tr.Items, transcript.Item{Kind: transcript.UserPrompt, Text: "own prompt"})
	marked := 0
	for page := 1; page <= 3; page++ {
		html, err := HTML(tr, Options{PageURL: func(n int) string { return "?p=" + string(rune('0'+n)) }, Page: page, PageScenes: 1})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		s := string(html)
		if strings.Contains(s, "⑂ Forked from orig-1 here") {
			marked++
			if page != 3 || !strings.Contains(s, "own prompt") {
				t.Errorf("page %d has the fork mark", page)
			}
		}
	}
	if marked != 1 {
		t.Errorf("the fork mark is on %d pages, want 1 (page 3)", marked)
	}
}
