package claude

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/transcript"
)

const (
	mainID   = "11111111-2222-4333-8444-555555555555"
	mainPath = "testdata/projects/-home-dev-shop/" + mainID + ".jsonl"
	legacyID = "22222222-aaaa-4bbb-8ccc-dddddddddddd"
)

func testEnv(t testing.TB, vars map[string]string) transcript.Env {
	t.Helper()
	return transcript.Env{Home: t.TempDir(), Getenv: func(k string) string { return vars[k] }}
}

func parse(t testing.TB, path string, opts transcript.ParseOptions) []*transcript.Transcript {
	t.Helper()
	ts, err := New().Parse(context.Background(), testEnv(t, nil), path, opts)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return ts
}

func parseOne(t testing.TB, path string) *transcript.Transcript {
	t.Helper()
	ts := parse(t, path, transcript.ParseOptions{})
	if len(ts) != 1 {
		t.Fatalf("parse %s: %d transcripts, want 1", path, len(ts))
	}
	return ts[0]
}

// writeLines writes a transcript in a temporary project directory.
func writeLines(t testing.TB, name string, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestDiscover(t *testing.T) {
	abs, _ := filepath.Abs("testdata")
	rel := func(files []transcript.File, root string) []string {
		var out []string
		for _, f := range files {
			r, _ := filepath.Rel(root, f.Path)
			out = append(out, filepath.ToSlash(r))
			if f.Size == 0 || f.ModTime.IsZero() {
				t.Errorf("%s not stat'ed", f.Path)
			}
		}
		slices.Sort(out)
		return out
	}
	t.Run("CLAUDE_CONFIG_DIR layouts", func(t *testing.T) {
		env := testEnv(t, map[string]string{"CLAUDE_CONFIG_DIR": abs})
		files, err := New().Discover(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"projects/-home-dev-legacy/" + legacyID + ".jsonl",
			"projects/-home-dev-legacy/33333333-aaaa-4bbb-8ccc-dddddddddddd.jsonl",
			"projects/-home-dev-legacy/agent-5e1f0a2b.jsonl",
			"projects/-home-dev-shop/" + mainID + ".jsonl",
			"projects/-home-dev-shop/" + mainID + "/subagents/agent-a9f3e21.jsonl",
			"projects/-home-dev-shop/" + mainID + "/subagents/workflows/wf_docs/agent-w0001.jsonl",
		}
		if diff := cmp.Diff(want, rel(files, abs)); diff != "" {
			t.Fatalf("files (-want +got):\n%s", diff)
		}
		if got := New().Roots(env); !slices.Equal(got, []string{filepath.Join(abs, "projects")}) {
			t.Fatalf("roots = %v", got)
		}
	})
	t.Run("defaults to ~/.claude", func(t *testing.T) {
		env := testEnv(t, nil)
		dir := filepath.Join(env.Home, ".claude", "projects", "-p")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte("{}\n"), 0o644)
		files, err := New().Discover(context.Background(), env)
		if err != nil || len(files) != 1 || files[0].Path != filepath.Join(dir, "s.jsonl") {
			t.Fatalf("files = %+v, err = %v", files, err)
		}
	})
	t.Run("missing root", func(t *testing.T) {
		env := testEnv(t, map[string]string{"CLAUDE_CONFIG_DIR": filepath.Join(t.TempDir(), "none")})
		files, err := New().Discover(context.Background(), env)
		if err != nil || len(files) != 0 {
			t.Fatalf("files = %v, err = %v", files, err)
		}
	})
	t.Run("unreadable project is skipped", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads everything")
		}
		env := testEnv(t, nil)
		root := filepath.Join(env.Home, ".claude", "projects")
		for _, p := range []string{"-a", "-b"} {
			os.MkdirAll(filepath.Join(root, p), 0o755)
			os.WriteFile(filepath.Join(root, p, "s.jsonl"), []byte("{}\n"), 0o644)
		}
		os.Chmod(filepath.Join(root, "-a"), 0)
		t.Cleanup(func() { os.Chmod(filepath.Join(root, "-a"), 0o755) })
		files, err := New().Discover(context.Background(), env)
		if err != nil || len(files) != 1 {
			t.Fatalf("files = %+v, err = %v", files, err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := New().Discover(ctx, testEnv(t, map[string]string{"CLAUDE_CONFIG_DIR": abs})); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestParseMain(t *testing.T) {
	tr := parseOne(t, mainPath)
	want := transcript.Session{
		Provider:      "claude",
		ID:            mainID,
		Path:          mainPath,
		CWD:           "/home/dev/shop",
		Title:         "checkout rounding bug",
		FirstPrompt:   "The checkout test fails on main.\nPlease find out why and fix it.",
		PromptCount:   5,
		ToolCallCount: 3,
		Model:         "claude-sonnet-5",
		StartedAt:     ts("2026-11-30T10:00:00Z"),
		EndedAt:       ts("2026-11-30T10:10:02.1Z"),
		Usage:         &transcript.Usage{Input: 23, Output: 101, CacheRead: 4900, CacheWrite: 200, Reasoning: 20},
		UsageByModel: map[string]transcript.Usage{
			"claude-opus-5-5": {Input: 15, Output: 80, CacheRead: 2200, CacheWrite: 200, Reasoning: 20},
			"claude-sonnet-5": {Input: 8, Output: 21, CacheRead: 2700},
		},
		Compactions: []transcript.CompactionMark{{ID: "cb-1", Trigger: "manual", Time: ts("2026-11-30T10:10:00Z")}},
		Warnings: []string{
			`line 22: image of type "image/svg+xml" not embedded`,
			"line 36: malformed JSON; skipped",
			"line 37: malformed JSON; skipped",
			"line 38: not a JSON object; skipped",
		},
	}
	if diff := cmp.Diff(want, tr.Session); diff != "" {
		t.Fatalf("session (-want +got):\n%s", diff)
	}
	type item struct {
		Kind             transcript.ItemKind
		Text, Tool, Call string
		Directive, IsErr bool
		Images           int
		Model            string
	}
	var got []item
	for _, it := range tr.Items {
		got = append(got, item{it.Kind, it.Text, it.Tool, it.CallID, it.Directive, it.IsError, len(it.Images), it.Model})
	}
	wantItems := []item{
		{Kind: transcript.UserPrompt, Text: "The checkout test fails on main.\nPlease find out why and fix it."},
		{Kind: transcript.Thinking, Text: "Run the test first.", Model: "claude-opus-5-5"},
		{Kind: transcript.AssistantText, Text: "I'll run the checkout test.", Model: "claude-opus-5-5"},
		{Kind: transcript.ToolUse, Tool: "Bash", Call: "toolu_1", Model: "claude-opus-5-5"},
		{Kind: transcript.ToolResult, Text: "--- FAIL: TestTotal (0.00s)\n    total_test.go:14: got 9.99, want 10.00", Tool: "Bash", Call: "toolu_1", IsErr: true},
		{Kind: transcript.ToolUse, Tool: "Edit", Call: "toolu_2", Model: "claude-opus-5-5"},
		{Kind: transcript.ToolResult, Text: "The file /home/dev/shop/checkout/total.go has been updated.", Tool: "Edit", Call: "toolu_2"},
		{Kind: transcript.AssistantText, Text: "Fixed: the total was truncated instead of rounded.", Model: "claude-sonnet-5"},
		{Kind: transcript.UserPrompt, Text: "/model sonnet", Directive: true},
		{Kind: transcript.UserPrompt, Text: "Does the cart page look right now?", Images: 1},
		{Kind: transcript.UserPrompt, Text: "(image)"},
		{Kind: transcript.ToolUse, Tool: "Bash", Call: "toolu_3", Model: "claude-sonnet-5"},
		{Kind: transcript.ToolResult, Text: "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.", Tool: "Bash", Call: "toolu_3", IsErr: true},
		{Kind: transcript.AssistantText, Text: "API Error: Can't reach the API server"},
		{Kind: transcript.Compaction},
		{Kind: transcript.UserPrompt, Text: "! git status --short", Directive: true},
	}
	if diff := cmp.Diff(wantItems, got); diff != "" {
		t.Fatalf("items (-want +got):\n%s", diff)
	}
	if img := tr.Items[9].Images[0]; img.MIME != "image/png" || !strings.HasPrefix(img.DataURL, "data:image/png;base64,iVBORw0KGgo") {
		t.Fatalf("image = %+v", img)
	}
	if in := string(tr.Items[5].Input); in != `{"file_path":"/home/dev/shop/checkout/total.go","old_string":"math.Floor(x*100)/100","new_string":"math.Round(x*100)/100"}` {
		t.Fatalf("edit input = %s", in)
	}
	b, _ := json.Marshal(tr)
	for _, leak := range []string{"SECRET-COMPACT-SUMMARY", "NOT A PROMPT", "Caveat:", "Set model to sonnet", "opened the file", "Request interrupted"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("transcript contains %q", leak)
		}
	}
}

func TestParseSubagents(t *testing.T) {
	dir := "testdata/projects/-home-dev-shop/" + mainID + "/subagents/"
	tests := []struct {
		path string
		want transcript.Session
	}{
		{dir + "agent-a9f3e21.jsonl", transcript.Session{
			Provider: "claude", ID: "a9f3e21", ParentID: mainID, ParentCallID: "toolu_9", Path: dir + "agent-a9f3e21.jsonl", CWD: "/home/dev/shop",
			Title: "Find Total callers", FirstPrompt: "Find every caller of checkout.Total and report whether it rounds.",
			PromptCount: 1, ToolCallCount: 1, Model: "claude-haiku-5",
			StartedAt: ts("2026-11-30T10:05:00Z"), EndedAt: ts("2026-11-30T10:05:03Z"),
			Usage:        &transcript.Usage{Input: 70, Output: 35, CacheRead: 500, CacheWrite: 500},
			UsageByModel: map[string]transcript.Usage{"claude-haiku-5": {Input: 70, Output: 35, CacheRead: 500, CacheWrite: 500}},
		}},
		{dir + "workflows/wf_docs/agent-w0001.jsonl", transcript.Session{
			Provider: "claude", ID: "w0001", ParentID: mainID, Path: dir + "workflows/wf_docs/agent-w0001.jsonl", CWD: "/home/dev/shop",
			Title: "Update docs/checkout.md for the rounding change.", FirstPrompt: "Update docs/checkout.md for the rounding change.",
			PromptCount: 1, ToolCallCount: 1, Model: "claude-haiku-5",
			StartedAt: ts("2026-11-30T10:06:00Z"), EndedAt: ts("2026-11-30T10:06:01Z"),
			Usage:        &transcript.Usage{Input: 8, Output: 14},
			UsageByModel: map[string]transcript.Usage{"claude-haiku-5": {Input: 8, Output: 14}},
		}},
		{"testdata/projects/-home-dev-legacy/agent-5e1f0a2b.jsonl", transcript.Session{
			Provider: "claude", ID: "5e1f0a2b", ParentID: legacyID, Path: "testdata/projects/-home-dev-legacy/agent-5e1f0a2b.jsonl", CWD: "/home/dev/legacy",
			Title: "Create cmd/root.go.", FirstPrompt: "Create cmd/root.go.",
			PromptCount: 1, ToolCallCount: 1, Model: "claude-sonnet-4-20250514",
			StartedAt: ts("2025-06-01T09:00:31Z"), EndedAt: ts("2025-06-01T09:00:40Z"),
			Usage:        &transcript.Usage{Input: 70, Output: 30},
			UsageByModel: map[string]transcript.Usage{"claude-sonnet-4-20250514": {Input: 70, Output: 30}},
		}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseOne(t, tt.path).Session); diff != "" {
				t.Fatalf("session (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLegacy(t *testing.T) {
	path := "testdata/projects/-home-dev-legacy/" + legacyID + ".jsonl"
	tr := parseOne(t, path)
	want := transcript.Session{
		Provider: "claude", ID: legacyID, Path: path, CWD: "/home/dev/legacy",
		Title: "Legacy session: port the CLI flags", FirstPrompt: "Port the CLI flags to cobra.",
		PromptCount: 1, ToolCallCount: 3, Model: "claude-sonnet-4-20250514",
		StartedAt: ts("2025-06-01T09:00:00Z"), EndedAt: ts("2025-06-01T09:00:30Z"),
		Usage: &transcript.Usage{Input: 270, Output: 110},
		UsageByModel: map[string]transcript.Usage{
			"claude-sonnet-4-20250514":  {Input: 220, Output: 100},
			"claude-3-5-haiku-20241022": {Input: 50, Output: 10},
		},
	}
	if diff := cmp.Diff(want, tr.Session); diff != "" {
		t.Fatalf("session (-want +got):\n%s", diff)
	}
	var tools []string
	for _, it := range tr.Items {
		if it.Kind == transcript.ToolUse {
			tools = append(tools, it.Tool+"/"+it.RawTool)
		}
	}
	if want := []string{"Task/Task", "Task/Agent", "mcp__github__create_pull_request/mcp__github__create_pull_request"}; !slices.Equal(tools, want) {
		t.Fatalf("tools = %v", tools)
	}
	if ts := parse(t, "testdata/projects/-home-dev-legacy/33333333-aaaa-4bbb-8ccc-dddddddddddd.jsonl", transcript.ParseOptions{}); len(ts) != 0 {
		t.Fatalf("summary-only file gave %+v", ts[0].Session)
	}
}

func TestTitlePrecedence(t *testing.T) {
	user := `{"type":"user","message":{"role":"user","content":"the prompt"}}`
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"first prompt", []string{user}, "the prompt"},
		{"summary", []string{`{"type":"summary","summary":"s1"}`, user, `{"type":"summary","summary":"s2"}`}, "s2"},
		{"ai-title beats summary", []string{user, `{"type":"ai-title","aiTitle":"ai1"}`, `{"type":"summary","summary":"s"}`, `{"type":"ai-title","aiTitle":"ai2"}`}, "ai2"},
		{"custom-title beats all, latest wins", []string{`{"type":"custom-title","customTitle":"c1"}`, user, `{"type":"custom-title","customTitle":"c2"}`, `{"type":"ai-title","aiTitle":"ai"}`}, "c2"},
		{"blank titles ignored", []string{user, `{"type":"custom-title","customTitle":"  "}`}, "the prompt"},
		{"directive is never the title", []string{`{"type":"user","message":{"role":"user","content":"<command-name>/init</command-name>"}}`, user}, "the prompt"},
		{"non-human origin is a directive", []string{`{"type":"user","origin":{"kind":"task-notification"},"message":{"role":"user","content":"job done"}}`, user}, "the prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := parseOne(t, writeLines(t, "s.jsonl", tt.lines...))
			if tr.Title != tt.want {
				t.Fatalf("title = %q, want %q", tr.Title, tt.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		in    string
		kind  promptKind
		shown string
	}{
		{"fix the bug", prompt, "fix the bug"},
		{"<command-name>/review</command-name><command-message>review</command-message><command-args>PR 12</command-args>", directivePrompt, "/review PR 12"},
		{"<command-message>init is analyzing</command-message>\n<command-name>init</command-name>", directivePrompt, "/init"},
		{"<bash-input>ls -la</bash-input>", directivePrompt, "! ls -la"},
		{"<task-notification>job 3 finished</task-notification>", directivePrompt, "<task-notification>job 3 finished</task-notification>"},
		{"<local-command-stdout>ok</local-command-stdout>", notPrompt, ""},
		{"<bash-stdout>x</bash-stdout><bash-stderr></bash-stderr>", notPrompt, ""},
		{"Caveat: The messages below were generated by the user while running local commands. DO NOT", notPrompt, ""},
		{"[Request interrupted by user]", notPrompt, ""},
		{"  <system-reminder>a</system-reminder>\n<system-reminder>b</system-reminder> ", notPrompt, ""},
		{"<system-reminder>a</system-reminder> and my real question", prompt, "<system-reminder>a</system-reminder> and my real question"},
		{"This session is being continued from a previous conversation that ran out of context.", notPrompt, ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			kind, shown := classify(tt.in)
			if kind != tt.kind || shown != tt.shown {
				t.Fatalf("got (%v, %q), want (%v, %q)", kind, shown, tt.kind, tt.shown)
			}
		})
	}
}

func TestUsageDedup(t *testing.T) {
	a := func(id, req, model string, in int) string {
		rec := map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "model": model, "usage": map[string]any{"input_tokens": in, "output_tokens": 1}}}
		if id != "" {
			rec["message"].(map[string]any)["id"] = id
		}
		if req != "" {
			rec["requestId"] = req
		}
		b, _ := json.Marshal(rec)
		return string(b)
	}
	tests := []struct {
		name  string
		lines []string
		input int64
	}{
		{"same message and request counted once", []string{a("m1", "r1", "x", 10), a("m1", "r1", "x", 10)}, 10},
		{"first occurrence wins", []string{a("m1", "r1", "x", 10), a("m1", "r1", "x", 99)}, 10},
		{"same message, other request counted", []string{a("m1", "r1", "x", 10), a("m1", "r2", "x", 10)}, 20},
		{"no request id is never de-duplicated", []string{a("m1", "", "x", 10), a("m1", "", "x", 10)}, 20},
		{"no message id is never de-duplicated", []string{a("", "r1", "x", 10), a("", "r1", "x", 10)}, 20},
		{"synthetic is not counted", []string{a("m1", "r1", "x", 10), a("m2", "r2", "<synthetic>", 50)}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := parseOne(t, writeLines(t, "s.jsonl", tt.lines...))
			if tr.Usage == nil || tr.Usage.Input != tt.input {
				t.Fatalf("usage = %+v, want input %d", tr.Usage, tt.input)
			}
			if tr.Model != "x" {
				t.Fatalf("model = %q", tr.Model)
			}
		})
	}
}

func TestImagesBudget(t *testing.T) {
	data := strings.Repeat("A", 4<<20) // 3 MiB decoded
	line := `{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"` + data + `"}}]}}`
	var lines []string
	for range 9 {
		lines = append(lines, line)
	}
	lines = append(lines, `{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"not base64!"}}]}}`)
	tr := parseOne(t, writeLines(t, "s.jsonl", lines...))
	embedded := 0
	for _, it := range tr.Items {
		embedded += len(it.Images)
		if it.Text != "(image)" {
			t.Fatalf("image-only prompt text = %q", it.Text)
		}
	}
	if embedded != 8 || tr.PromptCount != 10 {
		t.Fatalf("embedded %d of 9, prompts %d; warnings %v", embedded, tr.PromptCount, tr.Warnings)
	}
	want := []string{"line 9: image not embedded: image of 3145728 bytes exceeds the remaining per-parse budget (25165824 of 26214400 bytes used)", "line 10: image not embedded: data is not base64"}
	if diff := cmp.Diff(want, tr.Warnings); diff != "" {
		t.Fatalf("warnings (-want +got):\n%s", diff)
	}
	// Summary scans never decode images.
	if sum := parse(t, tr.Path, transcript.ParseOptions{SummaryOnly: true})[0]; len(sum.Warnings) != 0 {
		t.Fatalf("summary warnings %v", sum.Warnings)
	}
}

func TestSummaryOnlyMatchesFull(t *testing.T) {
	paths := []string{mainPath, "testdata/projects/-home-dev-legacy/" + legacyID + ".jsonl"}
	for _, p := range paths {
		full := parseOne(t, p).Session
		sum := parse(t, p, transcript.ParseOptions{SummaryOnly: true})[0]
		if sum.Items != nil {
			t.Fatalf("summary built items")
		}
		// Image warnings exist only in full parses.
		full.Warnings = slices.DeleteFunc(full.Warnings, func(w string) bool { return strings.Contains(w, "image") })
		if diff := cmp.Diff(full, sum.Session); diff != "" {
			t.Fatalf("%s (-full +summary):\n%s", p, diff)
		}
	}
}

func TestParseErrors(t *testing.T) {
	if _, err := New().Parse(context.Background(), testEnv(t, nil), filepath.Join(t.TempDir(), "x.jsonl"), transcript.ParseOptions{}); err == nil || !strings.Contains(err.Error(), "open claude transcript") {
		t.Fatalf("err = %v", err)
	}
	lines := make([]string, 10000)
	for i := range lines {
		lines[i] = `{"type":"user","message":{"role":"user","content":"x"}}`
	}
	path := writeLines(t, "big.jsonl", lines...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Parse(ctx, testEnv(t, nil), path, transcript.ParseOptions{}); err == nil {
		t.Fatal("cancelled parse succeeded")
	}
}
