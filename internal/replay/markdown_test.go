package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// hostileReply is markdown an agent could be tricked into writing: links
// with script schemes in several spellings, raw HTML, remote images.
const hostileReply = "# Result\n\n" +
	"See [the docs](https://example.com/docs) and [click me](javascript:alert(1)) or [again](JaVaScRiPt:alert(2)) " +
	"or [vb](vbscript:msgbox) or [data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) or [file](file:///etc/passwd) " +
	"or [rel](../../etc/passwd) or <javascript:alert(3)> or <https://auto.example.com/x> or www.linkified.example.com.\n\n" +
	"<script>alert('raw')</script>\n\n<img src=x onerror=alert(4)>\n\n" +
	"Inline <b onclick=\"alert(5)\">bold</b> html and ![remote](https://tracker.example.com/pixel.png) and ![js](javascript:alert(6)).\n\n" +
	"| a | b |\n|---|---|\n| **1** | `2` |\n\n" +
	"- [x] done\n- [ ] todo\n\n" +
	"```go\nfunc main() { fmt.Println(\"hi\") }\n```\n\n" +
	"```nosuchlang\n<script>alert(7)</script>\n```\n"

func TestMarkdownSanitizes(t *testing.T) {
	tr := &transcript.Transcript{Items: []transcript.Item{
		{Kind: transcript.UserPrompt, Text: "go"},
		{Kind: transcript.AssistantText, Text: hostileReply},
	}}
	out, err := HTML(tr, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	start := strings.Index(page, `<div class="md">`)
	if start < 0 {
		t.Fatalf("the reply was not rendered as markdown:\n%s", page)
	}
	body := page[start:strings.Index(page, "</main>")]
	hrefs := regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(body, -1)
	var got []string
	for _, h := range hrefs {
		got = append(got, h[1])
	}
	want := []string{"https://example.com/docs", "https://auto.example.com/x", "http://www.linkified.example.com", "https://tracker.example.com/pixel.png"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("live links = %q, want %q", got, want)
	}
	for _, bad := range []string{"<script", "<img", "onerror", "onclick", "<b ", `src="`} {
		if strings.Contains(body, bad) {
			t.Errorf("the rendered reply contains %q", bad)
		}
	}
	for _, want := range []string{
		"<h1", "<table>", "<strong>1</strong>", "<code>2</code>", `type="checkbox"`,
		"click me", "javascript:alert(3)", // the text of dropped links stays
		"[image: remote]", "[image: js]",
		`rel="noopener noreferrer nofollow"`,
		`<div class="lang">go</div>`, `<span class="kd">func</span>`, // highlighted Go
		"&lt;script&gt;alert(7)&lt;/script&gt;", // an unknown language is escaped text
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the rendered reply lacks %q", want)
		}
	}
	if !strings.Contains(page, ".chroma .kd") {
		t.Error("the page carries no stylesheet for highlighted code")
	}
}

func TestSafeURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://a.example/x": true, "http://a.example": true, "mailto:a@b.example": true, "#scene-2": true,
		"javascript:alert(1)": false, "JAVASCRIPT:x": false, " javascript:x": false, "java\tscript:x": false,
		"data:text/html,x": false, "vbscript:x": false, "file:///etc": false, "//evil.example/x": false,
		"/etc/passwd": false, "relative/path": false, "https:///nohost": false, "mailto:": false, "#a\"b": false,
	} {
		if got := safeURL(u); got != want {
			t.Errorf("safeURL(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestHighlightBounds(t *testing.T) {
	huge := "```go\n" + strings.Repeat("x := 1\n", maxHighlightBytes/7+10) + "```\n"
	m := newMarkdown()
	html, ok := m.render(huge)
	if !ok || strings.Contains(string(html), `class="kd"`) || strings.Contains(string(html), `<span`) {
		t.Errorf("a code block over %d bytes was highlighted (or not rendered)", maxHighlightBytes)
	}
	if _, ok := m.render(strings.Repeat("a", maxMarkdownBytes+1)); ok {
		t.Error("a reply over the markdown bound was rendered")
	}
	// The page budget: once spent, blocks stay plain.
	m.budget = 10
	html, _ = m.render("```go\nfunc main() {}\n```\n")
	if strings.Contains(string(html), "<span") {
		t.Error("highlighting went past the page budget")
	}
}

// Markup that costs goldmark quadratic time (issue 22 item 11: 250 KB
// of "[a](" or ">" took 15 s a reply) is shown as text, while a reply of
// ordinary markdown and one with a large fenced code block still render.
func TestHostileMarkupIsNotRendered(t *testing.T) {
	for _, unit := range []string{"[a](", ">", "*a", "`a", "1. "} {
		for _, size := range []int{250 << 10, 16 << 10} {
			s := strings.Repeat(unit, size/len(unit))
			if _, ok := newMarkdown().render(s); ok {
				t.Errorf("%d bytes of %q were rendered as markdown", len(s), unit)
			}
		}
	}
	var prose strings.Builder
	for i := range 200 {
		fmt.Fprintf(&prose, "%d. Step *%d*: see [the docs](https://example.com/%d) and run `make test`.\n", i, i, i)
	}
	code := "Here:\n\n```go\n" + strings.Repeat("f(a[i], (b > c) && *p)\n", 2000) + "```\n"
	m := newMarkdown()
	for _, ok := range []string{prose.String(), code} {
		if _, rendered := m.render(ok); !rendered {
			t.Errorf("an ordinary reply of %d bytes (%d markup) was not rendered", len(ok), markup(ok))
		}
	}
	// The page budget: once spent, blocks stay plain.
	block := strings.Repeat("[a](https://x.example) ", maxMarkupChars/5)
	rendered := 0
	for range 2 * maxMarkupPageChars / maxMarkupChars {
		if _, ok := m.render(block); ok {
			rendered++
		}
	}
	if max := maxMarkupPageChars / markup(block); rendered > max {
		t.Errorf("%d blocks rendered, past the page's markup budget of %d", rendered, max)
	}
}

func parseFixture(t *testing.T, provider, path string, env transcript.Env) *transcript.Transcript {
	t.Helper()
	src := all.Source(provider)
	if src == nil {
		t.Fatalf("no %s source", provider)
	}
	ts, err := src.Parse(context.Background(), env, path, transcript.ParseOptions{})
	if err != nil || len(ts) == 0 {
		t.Fatalf("parse %s: %v (%d transcripts)", path, err, len(ts))
	}
	return ts[0]
}

// sharedDir is the repository's copy of the fixtures (testdata/shared).
func sharedDir(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(providertest.Shared, "fixtures")); err != nil {
		t.Fatal(err)
	}
	return providertest.Shared
}

func testEnv(t *testing.T, vars map[string]string) transcript.Env {
	home := t.TempDir()
	return transcript.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
}

// TestTodoWriteChecklist: claude-code-log's TodoWrite fixture, parsed by
// the Claude parser, replays its lists as checklists.
func TestTodoWriteChecklist(t *testing.T) {
	path := filepath.Join(sharedDir(t), "fixtures", "claude", "claude-code-log", "todowrite_examples.jsonl")
	tr := parseFixture(t, "claude", path, testEnv(t, nil))
	out, err := HTML(tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	if n := strings.Count(page, `<ul class="todos">`); n < 2 {
		t.Fatalf("%d checklists, want the fixture's TodoWrite calls as checklists", n)
	}
	for _, want := range []string{
		`<li class="pending"><span class="box">☐</span> Design the feature architecture</li>`,
		`class="completed"`, `class="in_progress"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(page, `&#34;todos&#34;`) || strings.Contains(page, `"priority"`) {
		t.Error("a TodoWrite call is still shown as raw JSON")
	}
}

func TestPlanChecklist(t *testing.T) {
	tr := &transcript.Transcript{Items: []transcript.Item{
		{Kind: transcript.UserPrompt, Text: "plan"},
		{Kind: transcript.ToolUse, RawTool: "update_plan", Tool: "update_plan", CallID: "p1",
			Input: json.RawMessage(`{"explanation":"Two steps","plan":[{"step":"Read the code","status":"completed"},{"step":"Fix it","status":"in_progress"}]}`)},
		{Kind: transcript.ToolResult, CallID: "p1", Text: "Plan updated"},
	}}
	out, _ := HTML(tr, Options{})
	page := string(out)
	for _, want := range []string{`<li class="completed"><span class="box">☑</span> Read the code</li>`, `<li class="in_progress"><span class="box">◐</span> Fix it</li>`, "Two steps"} {
		if !strings.Contains(page, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(page, "Plan updated") {
		t.Error("the plan call's acknowledgement is shown")
	}
}

// TestCodexExecUnwrapped: a real-format Codex rollout whose command output
// carries the Chunk ID / Wall time wrapper replays the output alone.
func TestCodexExecUnwrapped(t *testing.T) {
	home, _ := filepath.Abs(filepath.Join("..", "provider", "codex", "testdata", "home"))
	path := filepath.Join(home, "sessions", "2026", "11", "30", "rollout-2026-11-30T14-02-11-01a23000-1111-7222-8333-444455556666.jsonl")
	tr := parseFixture(t, "codex", path, testEnv(t, map[string]string{"CODEX_HOME": home}))
	out, err := HTML(tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	for _, bad := range []string{"Chunk ID:", "Wall time:", "Process exited with code", "Output:\n"} {
		if strings.Contains(page, bad) {
			t.Errorf("the wrapper's %q is still shown", bad)
		}
	}
	for _, want := range []string{"--- FAIL: TestStoreReload (0.01s)", `<span class="exit bad">exit 1</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("missing %q", want)
		}
	}
}

func TestUnwrapExec(t *testing.T) {
	for _, c := range []struct{ in, out, exit string }{
		{"Chunk ID: 4be1\nWall time: 2.9 seconds\nProcess exited with code 1\nOutput:\nFAIL\n", "FAIL\n", "1"},
		{"Exit code: 0\nWall time: 14 seconds\nOutput:\nok  store 13.2s\n", "ok  store 13.2s\n", "0"},
		{"Chunk ID: 9f0d7a\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 2\nOutput:\ndone\n", "done\n", "0"},
		{"Wall time: 12.5 seconds\naborted by user", "aborted by user", ""},
		{"plain output\nOutput:\nx", "plain output\nOutput:\nx", ""},
		{"Output:\nnot a wrapper", "Output:\nnot a wrapper", ""},
		{"", "", ""},
	} {
		out, exit := unwrapExec(c.in)
		if out != c.out || exit != c.exit {
			t.Errorf("unwrapExec(%q) = %q, %q; want %q, %q", c.in, out, exit, c.out, c.exit)
		}
	}
}
