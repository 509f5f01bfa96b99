package replay

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite golden files")

func loadSample(t testing.TB) *transcript.Transcript {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tr transcript.Transcript
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatal(err)
	}
	return &tr
}

func checkGolden(t *testing.T, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func count(s, sub string) int { return strings.Count(s, sub) }

func TestRender(t *testing.T) {
	tr := loadSample(t)
	out, err := HTML(tr, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	html := string(out)
	checks := []struct {
		name string
		ok   bool
	}{
		{"csp meta", strings.Contains(html, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; script-src &#39;unsafe-inline&#39;; img-src data:;`)},
		{"three scenes", count(html, `<section class="scene"`) == 3},
		{"scene count attribute", strings.Contains(html, `data-scenes="3"`)},
		{"thinking collapsible", count(html, `<details class="thinking">`) == 2},
		{"bash terminal", count(html, `<pre class="term cmd"><span class="ps1">$ </span>`) == 2},
		{"ansi stripped", !strings.Contains(html, "\x1b") && strings.Contains(html, "13:\treturn true")},
		{"edit diff", strings.Contains(html, `<tr class="del"><td class="n">1</td><td class="n"></td><td class="s">-</td><td>if hash == stored {</td></tr>`)},
		{"write diff", strings.Contains(html, `write /src/app/NOTES.md<span class="counts">+2 −0</span>`)},
		{"patch diff", strings.Contains(html, `update auth/login.go`) && strings.Contains(html, `add auth/README`)},
		{"tool error marked", count(html, `class="tool bash error"`) == 1 && strings.Contains(html, `<span class="err">error</span>`)},
		{"directive scene", strings.Contains(html, `<span class="tag">directive · scheduler.cron</span>`)},
		{"image embedded", strings.Contains(html, `<img class="attachment" src="data:image/png;base64,iVBORw0KGgo`)},
		{"remote image refused", !strings.Contains(html, `remote.svg"`) && strings.Contains(html, "remote.svg: image not embedded")},
		{"script escaped", !strings.Contains(html, "<script>alert(1)") && strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;")},
		{"img tag escaped", !strings.Contains(html, `<img src="http`)},
		{"title escaped", strings.Contains(html, "<h1>Fix the &lt;b&gt;login&lt;/b&gt; bug</h1>")},
		{"anthropic key redacted", !strings.Contains(html, "SECRETSECRET") && strings.Contains(html, "[REDACTED:anthropic-key]")},
		{"github token redacted", !strings.Contains(html, "ghp_ABCD")},
		{"redaction notice", strings.Contains(html, `data-redacted="true" data-redactions="2"`) && strings.Contains(html, "Secrets redacted: 2") && strings.Contains(html, "(1 anthropic-key, 1 github-token)")},
		{"orphan result shown", strings.Contains(html, "orphan result")},
		{"compaction marker", strings.Contains(html, "Context compacted: compacted (auto)")},
		{"header counts", strings.Contains(html, "<b>3</b> prompts") && strings.Contains(html, "<b>6</b> tool calls") && strings.Contains(html, "<b>1</b> tool errors")},
		{"header dates", strings.Contains(html, "started <b>2026-03-01 10:00:00 UTC</b>") && strings.Contains(html, "duration <b>12m30s</b>")},
		{"no external urls", !regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(html)},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not as expected", c.name)
		}
	}
	checkGolden(t, out)

	again, _ := HTML(tr, Options{Version: "test"})
	if string(again) != html {
		t.Error("rendering is not deterministic")
	}
}

func TestRenderNoRedact(t *testing.T) {
	out, err := HTML(loadSample(t), Options{NoRedact: true})
	if err != nil {
		t.Fatal(err)
	}
	html := string(out)
	if !strings.Contains(html, "sk-ant-api03-SECRETSECRETSECRETSECRET01") || !strings.Contains(html, `data-redacted="false"`) || !strings.Contains(html, "Not redacted") {
		t.Error("--no-redact page does not show the transcript as recorded, or does not say so")
	}
}

func TestRenderEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		tr   transcript.Transcript
		want []string
	}{
		{"empty", transcript.Transcript{}, []string{"<h1>Untitled session</h1>", `data-scenes="0"`}},
		{"preamble", transcript.Transcript{Items: []transcript.Item{{Kind: transcript.AssistantText, Text: "hello"}}},
			[]string{"Before the first prompt", `data-scenes="1"`}},
		{"image only prompt", transcript.Transcript{Items: []transcript.Item{{Kind: transcript.UserPrompt,
			Images: []transcript.Image{{MIME: "image/png", DataURL: "data:image/png;base64,AAAA"}}}}}, []string{">(image)<img"}},
		{"title from first prompt", transcript.Transcript{Session: transcript.Session{FirstPrompt: "  first line\nsecond"}}, []string{"<h1>first line</h1>"}},
		{"tool without result", transcript.Transcript{Items: []transcript.Item{{Kind: transcript.ToolUse, Tool: "Read", CallID: "x", Input: json.RawMessage(`{"file_path":"/a"}`)}}},
			[]string{`<span class="subject">/a</span>`}},
		{"bad input json", transcript.Transcript{Items: []transcript.Item{{Kind: transcript.ToolUse, Tool: "Edit", Input: json.RawMessage(`{"file_path":`)}}},
			[]string{`<span class="name">Edit</span>`}},
		{"control characters", transcript.Transcript{Items: []transcript.Item{{Kind: transcript.UserPrompt, Text: "a\x00b\x07c\u202e"}}},
			[]string{"abc<"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := HTML(&tt.tr, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("missing %q", w)
				}
			}
		})
	}
}

func TestClipLongOutput(t *testing.T) {
	long := strings.Repeat("line\n", 5000)
	tr := &transcript.Transcript{Items: []transcript.Item{
		{Kind: transcript.UserPrompt, Text: "go"},
		{Kind: transcript.ToolUse, Tool: "Bash", CallID: "1", Input: json.RawMessage(`{"command":"yes"}`)},
		{Kind: transcript.ToolResult, CallID: "1", Text: long},
	}}
	out, _ := HTML(tr, Options{})
	html := string(out)
	if count(html, "line\n") > maxOutputLines+1 || !strings.Contains(html, "output clipped (5000 lines in all)") || !strings.Contains(html, `<details class="output"><summary>Output (5000 lines)</summary>`) {
		t.Error("long output was not clipped and collapsed")
	}
}
