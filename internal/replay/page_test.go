package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

func longSession(prompts int, output string) *transcript.Transcript {
	tr := &transcript.Transcript{}
	for i := range prompts {
		id := fmt.Sprint(i)
		tr.Items = append(tr.Items,
			transcript.Item{Kind: transcript.UserPrompt, Text: fmt.Sprintf("prompt %d", i+1)},
			transcript.Item{Kind: transcript.AssistantText, Text: fmt.Sprintf("**reply %d**", i+1)},
			transcript.Item{Kind: transcript.ToolUse, Tool: "Bash", CallID: id, Input: json.RawMessage(`{"command":"ls"}`)},
			transcript.Item{Kind: transcript.ToolResult, CallID: id, Text: output},
		)
	}
	return tr
}

var sceneIDs = regexp.MustCompile(`<section class="scene" id="scene-(\d+)"`)

func scenesOf(page string) []string {
	var out []string
	for _, m := range sceneIDs.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestPagesByScenes(t *testing.T) {
	tr := longSession(250, "ok")
	url := func(n int) string { return fmt.Sprintf("/s?page=%d", n) }
	for page, want := range map[int][2]string{1: {"1", "100"}, 2: {"101", "200"}, 3: {"201", "250"}} {
		out, err := HTML(tr, Options{PageURL: url, Page: page})
		if err != nil {
			t.Fatal(err)
		}
		html := string(out)
		ids := scenesOf(html)
		if len(ids) == 0 || ids[0] != want[0] || ids[len(ids)-1] != want[1] {
			t.Errorf("page %d shows scenes %v…, want %s–%s", page, ids[:min(3, len(ids))], want[0], want[1])
		}
		if !strings.Contains(html, fmt.Sprintf(`data-page="%d" data-pages="3"`, page)) || !strings.Contains(html, `data-scene-total="250"`) ||
			!strings.Contains(html, fmt.Sprintf("page %d of 3 · prompts %s–%s", page, want[0], want[1])) {
			t.Errorf("page %d: pager or totals missing", page)
		}
		if (page < 3) != strings.Contains(html, fmt.Sprintf(`href="/s?page=%d" rel="next"`, page+1)) {
			t.Errorf("page %d: wrong next link", page)
		}
		if (page > 1) != strings.Contains(html, fmt.Sprintf(`href="/s?page=%d" rel="prev"`, page-1)) {
			t.Errorf("page %d: wrong previous link", page)
		}
		// The header still describes the whole session.
		if !strings.Contains(html, "<b>250</b> prompts") {
			t.Errorf("page %d: header counts are not the session's", page)
		}
		// Markdown is rendered on the page's scenes.
		if !strings.Contains(html, fmt.Sprintf("<strong>reply %s</strong>", want[0])) {
			t.Errorf("page %d: markdown not rendered", page)
		}
	}
	if _, err := HTML(tr, Options{PageURL: url, Page: 4}); !errors.Is(err, ErrNoPage) {
		t.Errorf("page 4 of 3: %v, want ErrNoPage", err)
	}
	// Without PageURL the session is one page with every scene.
	out, _ := HTML(tr, Options{Page: 2})
	if n := len(scenesOf(string(out))); n != 250 || strings.Contains(string(out), `class="pager"`) {
		t.Errorf("an unpaged replay shows %d scenes (or a pager)", n)
	}
	// A short session paged has no pager.
	out, _ = HTML(longSession(3, "ok"), Options{PageURL: url})
	if strings.Contains(string(out), `<nav class="pager">`) || len(scenesOf(string(out))) != 3 {
		t.Error("a one-page session shows a pager")
	}
}

// TestPagesByBytes: scenes with large outputs split pages by size before
// the scene bound.
func TestPagesByBytes(t *testing.T) {
	big := strings.Repeat(strings.Repeat("0123456789", 15)+"\n", 390) // about 60 KiB, under the clip bounds
	tr := longSession(40, big)
	var total int
	for page := 1; ; page++ {
		out, err := HTML(tr, Options{PageURL: func(n int) string { return fmt.Sprint(n) }, Page: page, PageBytes: 1 << 20})
		if errors.Is(err, ErrNoPage) {
			if page < 3 {
				t.Fatalf("only %d pages for 40 scenes of 60 KiB in pages of 1 MiB", page-1)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > 3<<20/2 {
			t.Errorf("page %d is %d bytes, over the 1 MiB budget by more than half", page, len(out))
		}
		total += len(scenesOf(string(out)))
	}
	if total != 40 {
		t.Errorf("the pages show %d scenes in all, want 40", total)
	}
}

func TestNavLinks(t *testing.T) {
	out, _ := HTML(longSession(1, "ok"), Options{Nav: []Link{{"History", "/"}, {"Bad", "javascript:alert(1)"}}})
	html := string(out)
	if !strings.Contains(html, `<nav class="site"><a href="/">History</a>`) || strings.Contains(html, `href="javascript`) {
		t.Errorf("nav links wrong:\n%s", html[:min(len(html), 400)])
	}
}
