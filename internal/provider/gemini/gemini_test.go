package gemini

import (
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

const alpha = "testdata/home/.gemini/tmp/alpha/chats/session-2026-11-02T09-15-a1b2c3d4.jsonl"

func parseFile(t *testing.T, path string, opts transcript.ParseOptions) *transcript.Transcript {
	t.Helper()
	ts, err := New().Parse(t.Context(), transcript.Env{}, path, opts)
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	if len(ts) != 1 {
		t.Fatalf("Parse(%s) gave %d transcripts, want 1", path, len(ts))
	}
	return ts[0]
}

// parseText writes content as a chat file in a fresh project directory and
// parses it.
func parseText(t *testing.T, name, content string) *transcript.Transcript {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmp", "proj", "chats")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return parseFile(t, path, transcript.ParseOptions{})
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseSession(t *testing.T) {
	got := parseFile(t, alpha, transcript.ParseOptions{})
	want := transcript.Session{
		Provider:      "gemini",
		ID:            "a1b2c3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
		Path:          alpha,
		CWD:           "/work/alpha",
		Title:         "Fix the flaky TestFoo",
		FirstPrompt:   "Fix the flaky test in @pkg/foo_test.go",
		PromptCount:   3,
		ToolCallCount: 11,
		Model:         "gemini-2.5-flash",
		StartedAt:     ts("2026-11-02T09:15:00Z"),
		EndedAt:       ts("2026-11-02T09:18:06Z"),
		Usage:         &transcript.Usage{Input: 2220, Output: 217, CacheRead: 3600, Reasoning: 30},
		UsageByModel: map[string]transcript.Usage{
			"gemini-2.5-pro":   {Input: 1120, Output: 200, CacheRead: 3500, Reasoning: 30},
			"gemini-2.5-flash": {Input: 1100, Output: 17, CacheRead: 100},
		},
		Warnings: []string{"line 6: malformed JSON", "line 12: not a JSON object"},
	}
	if diff := cmp.Diff(want, got.Session); diff != "" {
		t.Errorf("session (-want +got):\n%s", diff)
	}

	var kinds []string
	for _, it := range got.Items {
		k := string(it.Kind)
		if it.Tool != "" {
			k += ":" + it.Tool
		}
		kinds = append(kinds, k)
	}
	wantKinds := []string{
		"user_prompt", "thinking", "thinking", "assistant_text",
		"tool_use:Read", "tool_result:Read", "tool_use:Bash", "tool_result:Bash",
		"tool_use:Edit", "tool_result:Edit", "tool_use:Write", "tool_result:Write",
		"tool_use:Glob", "tool_result:Glob", "tool_use:Grep", "tool_result:Grep",
		"tool_use:LS", "tool_result:LS", "tool_use:WebFetch", "tool_result:WebFetch",
		"tool_use:WebSearch", "tool_result:WebSearch", "tool_use:TodoWrite", "tool_result:TodoWrite",
		"tool_use:github__create_issue", "tool_result:github__create_issue",
		"user_prompt", "assistant_text", "user_prompt", "assistant_text",
	}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("item kinds (-want +got):\n%s", diff)
	}
}

func TestParseItems(t *testing.T) {
	got := parseFile(t, alpha, transcript.ParseOptions{})
	byCall := map[string][]transcript.Item{}
	for _, it := range got.Items {
		if it.CallID != "" {
			byCall[it.CallID] = append(byCall[it.CallID], it)
		}
	}
	tests := []struct {
		name      string
		call      string
		tool, raw string
		input     string
		result    string
		isErr     bool
	}{
		{"read_file absolute_path becomes file_path", "read_file-1", "Read", "read_file", `{"file_path":"/work/alpha/pkg/foo_test.go"}`, "package foo\n\nfunc TestFoo(t *testing.T) {}\n", false},
		{"shell output loses the untrusted_context envelope", "run_shell_command-2", "Bash", "run_shell_command", `{"command":"go test ./pkg/...","description":"Run the package tests."}`, "Output: FAIL\tpkg 0.02s\nExit Code: 1", false},
		{"replace keeps canonical edit keys", "replace-3", "Edit", "replace", `{"file_path":"/work/alpha/pkg/foo_test.go","old_string":"time.Sleep(10)","new_string":"time.Sleep(100)","instruction":"Lengthen the wait."}`, "Successfully modified file.", false},
		{"status error and response error mark the result", "write_file-4", "Write", "write_file", `{"file_path":"/work/alpha/NOTES.md","content":"flaky: fixed\n"}`, "Permission denied", true},
		{"glob dir_path becomes path; string result", "glob-5", "Glob", "glob", `{"pattern":"**/*_test.go","path":"pkg"}`, "Found 2 file(s)", false},
		{"search_file_content is Grep", "search-6", "Grep", "search_file_content", `{"pattern":"Sleep","path":"pkg","include":"*.go"}`, "pkg/foo_test.go:7: time.Sleep(100)", false},
		{"list_directory is LS", "ls-7", "LS", "list_directory", `{"path":"pkg"}`, "foo.go\nfoo_test.go", false},
		{"cancelled call without result is an error", "fetch-8", "WebFetch", "web_fetch", `{"prompt":"Summarise https://go.dev/doc/effective_go"}`, "cancelled", true},
		{"google_web_search is WebSearch", "search-9", "WebSearch", "google_web_search", `{"query":"go test -count flaky"}`, "Use -count=1 to disable caching.", false},
		{"resultDisplay stands in for a missing result", "todos-10", "TodoWrite", "write_todos", `{"todos":[{"description":"fix test","status":"completed"}]}`, "Updated the todo list.", false},
		{"unknown tools pass through with the response as JSON", "mcp-11", "github__create_issue", "github__create_issue", `{"title":"flaky TestFoo"}`, `{"issue":42}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := byCall[tt.call]
			if len(items) != 2 || items[0].Kind != transcript.ToolUse || items[1].Kind != transcript.ToolResult {
				t.Fatalf("call %s: got %+v, want a tool_use then a tool_result", tt.call, items)
			}
			use, res := items[0], items[1]
			if use.Tool != tt.tool || use.RawTool != tt.raw {
				t.Errorf("tool = %q/%q, want %q/%q", use.Tool, use.RawTool, tt.tool, tt.raw)
			}
			if !jsonEqual(use.Input, tt.input) {
				t.Errorf("input = %s, want %s", use.Input, tt.input)
			}
			if res.Text != tt.result || res.IsError != tt.isErr {
				t.Errorf("result = %q (error %v), want %q (error %v)", res.Text, res.IsError, tt.result, tt.isErr)
			}
		})
	}

	t.Run("thoughts and thought parts are thinking", func(t *testing.T) {
		if got.Items[1].Text != "Reading the test\nThe failure is timing related." || got.Items[2].Text != "Let me look at the test first." {
			t.Errorf("thinking = %q, %q", got.Items[1].Text, got.Items[2].Text)
		}
	})
	t.Run("inline image is embedded", func(t *testing.T) {
		p := got.Items[26]
		if p.Kind != transcript.UserPrompt || p.Text != "What does this screenshot show?" || len(p.Images) != 1 ||
			p.Images[0].MIME != "image/png" || !strings.HasPrefix(p.Images[0].DataURL, "data:image/png;base64,iVBORw0KGgo") {
			t.Errorf("image prompt = %+v", p)
		}
	})
	t.Run("user_shell is a prompt from the shell", func(t *testing.T) {
		p := got.Items[28]
		if p.Kind != transcript.UserPrompt || p.Text != "git status" || p.Source != "shell" {
			t.Errorf("shell prompt = %+v", p)
		}
	})
}

func jsonEqual(got json.RawMessage, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	return cmp.Equal(a, b)
}

// Each case is one rule of the format, as a small file.
func TestParseRules(t *testing.T) {
	const meta = `{"sessionId":"s-1","projectHash":"h","startTime":"2026-01-01T00:00:00Z","lastUpdated":"2026-01-01T00:00:00Z","kind":"main"}` + "\n"
	user := func(id, text string) string {
		return `{"id":"` + id + `","timestamp":"2026-01-01T00:00:01Z","type":"user","content":[{"text":"` + text + `"}]}` + "\n"
	}
	tests := []struct {
		name        string
		file        string
		content     string
		prompts     []string
		tools       int
		title       string
		warnings    []string
		startedAt   string
		wantUsage   *transcript.Usage
		wantModel   string
		wantSession string
	}{
		{
			name:    "a repeated id replaces the message in place",
			content: meta + user("a", "one") + user("b", "two") + user("a", "one, edited"),
			prompts: []string{"one, edited", "two"},
			title:   "one, edited",
		},
		{
			name:    "$set messages replaces the whole list",
			content: meta + user("a", "one") + `{"$set":{"messages":[{"id":"x","type":"user","content":"replaced"}]}}` + "\n" + user("y", "after"),
			prompts: []string{"replaced", "after"},
			title:   "replaced",
		},
		{
			name:    "$rewindTo drops the target and what follows",
			content: meta + user("a", "one") + user("b", "two") + user("c", "three") + `{"$rewindTo":"b"}` + "\n" + user("d", "four"),
			prompts: []string{"one", "four"},
			title:   "one",
		},
		{
			name:    "$rewindTo an unknown id drops everything",
			content: meta + user("a", "one") + `{"$rewindTo":"zzz"}` + "\n" + user("b", "two"),
			prompts: []string{"two"},
			title:   "two",
		},
		{
			name:    "an empty $snapshot is ignored, a full one replaces",
			content: meta + user("a", "one") + `{"$snapshot":true,"messages":[]}` + "\n" + user("b", "two") + `{"$snapshot":true,"messages":[{"id":"s","type":"user","content":"compressed"}]}` + "\n",
			prompts: []string{"compressed"},
			title:   "compressed",
		},
		{
			name:    "$set summary is the title; the last one wins",
			content: meta + user("a", "one") + `{"$set":{"summary":"First title"}}` + "\n" + `{"$set":{"summary":"Better title\nsecond line"}}` + "\n",
			prompts: []string{"one"},
			title:   "Better title",
		},
		{
			name:    "session_context and echoed tool responses are not prompts",
			content: meta + user("c", `<session_context>\n- **Workspace Directories:**\n  - /w\n</session_context>`) + `{"id":"r","type":"user","content":[{"functionResponse":{"id":"t","name":"x","response":{"output":"o"}}}]}` + "\n" + user("a", "real"),
			prompts: []string{"real"},
			title:   "real",
		},
		{
			name:    "displayContent wins over expanded content",
			content: meta + `{"id":"a","type":"user","content":[{"text":"look at @a.go"},{"text":"\n--- Content from referenced files ---\nbody"}],"displayContent":[{"text":"look at @a.go"}]}` + "\n",
			prompts: []string{"look at @a.go"},
			title:   "look at @a.go",
		},
		{
			name:    "info, warning and error messages are skipped",
			content: meta + `{"id":"i","type":"info","content":"note"}` + "\n" + `{"id":"w","type":"warning","content":"careful"}` + "\n" + `{"id":"e","type":"error","content":"boom"}` + "\n",
		},
		{
			name:     "malformed and non-object lines are warnings, unknown records silent",
			content:  meta + "{oops\n" + "42\n" + `{"$patch":{"updates":[]}}` + "\n" + `{"somethingNew":true}` + "\n" + user("a", "one") + "\n\n" + `"str"` + "\n",
			prompts:  []string{"one"},
			title:    "one",
			warnings: []string{"line 2: malformed JSON", "line 3: not a JSON object", "line 9: not a JSON object"},
		},
		{
			name:      "tokens: input includes cached, thoughts are output",
			content:   meta + `{"id":"g","type":"gemini","content":"ok","model":"m1","tokens":{"input":100,"output":10,"cached":60,"thoughts":5,"tool":7,"total":122}}` + "\n" + `{"id":"g2","type":"gemini","content":"ok","model":"m1","tokens":null}` + "\n",
			wantUsage: &transcript.Usage{Input: 47, Output: 15, CacheRead: 60, Reasoning: 5},
			wantModel: "m1",
		},
		{
			name:    "tool calls without ids still count",
			content: meta + user("a", "go") + `{"id":"g","type":"gemini","content":"","toolCalls":[{"name":"read_file","args":{"file_path":"a"},"status":"success"},{"name":"glob","args":{"pattern":"*"}},"junk"]}` + "\n",
			prompts: []string{"go"},
			title:   "go",
			tools:   2,
		},
		{
			name:      "legacy document",
			file:      "session-old.json",
			content:   `{"sessionId":"legacy-1","projectHash":"h","startTime":"2025-05-05T05:05:05Z","lastUpdated":"2025-05-05T06:00:00Z","messages":[{"id":"1","type":"user","content":"hello"},{"id":"2","type":"gemini","content":"hi"}]}`,
			prompts:   []string{"hello"},
			title:     "hello",
			startedAt: "2025-05-05T05:05:05Z",
		},
		{
			name:        "a .jsonl holding one pretty-printed document",
			content:     "{\n  \"sessionId\": \"pretty-1\",\n  \"messages\": [{\"id\": \"1\", \"type\": \"user\", \"content\": \"pretty\"}]\n}\n",
			prompts:     []string{"pretty"},
			title:       "pretty",
			wantSession: "pretty-1",
		},
		{
			name:        "no metadata: the id comes from the file name",
			file:        "session-2026-01-01T00-00-abcd1234.jsonl",
			content:     user("a", "x"),
			prompts:     []string{"x"},
			title:       "x",
			wantSession: "session-2026-01-01T00-00-abcd1234",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = "session.jsonl"
			}
			got := parseText(t, file, tt.content)
			var prompts []string
			for _, it := range got.Items {
				if it.Kind == transcript.UserPrompt {
					prompts = append(prompts, it.Text)
				}
			}
			if diff := cmp.Diff(tt.prompts, prompts); diff != "" {
				t.Errorf("prompts (-want +got):\n%s", diff)
			}
			if got.PromptCount != len(tt.prompts) {
				t.Errorf("PromptCount = %d, want %d", got.PromptCount, len(tt.prompts))
			}
			if got.ToolCallCount != tt.tools {
				t.Errorf("ToolCallCount = %d, want %d", got.ToolCallCount, tt.tools)
			}
			if got.Title != tt.title {
				t.Errorf("Title = %q, want %q", got.Title, tt.title)
			}
			if diff := cmp.Diff(tt.warnings, got.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if tt.startedAt != "" && !got.StartedAt.Equal(ts(tt.startedAt)) {
				t.Errorf("StartedAt = %v, want %s", got.StartedAt, tt.startedAt)
			}
			if diff := cmp.Diff(tt.wantUsage, got.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if got.Model != tt.wantModel {
				t.Errorf("Model = %q, want %q", got.Model, tt.wantModel)
			}
			if tt.wantSession != "" && got.ID != tt.wantSession {
				t.Errorf("ID = %q, want %q", got.ID, tt.wantSession)
			}
		})
	}
}

func TestParseImages(t *testing.T) {
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAA="
	big := strings.Repeat("A", (transcript.MaxImageBytes/3+1)*4)
	img := func(id, mime, data string) string {
		return `{"id":"` + id + `","type":"user","content":[{"inlineData":{"mimeType":"` + mime + `","data":"` + data + `"}}]}` + "\n"
	}
	got := parseText(t, "s.jsonl", img("a", "image/png", png)+img("b", "image/png", "!!not base64!!")+img("c", "image/png", big)+img("d", "image/svg+xml", png))
	if got.PromptCount != 3 {
		t.Errorf("PromptCount = %d, want 3 (image-only prompts count; svg is not an image we embed)", got.PromptCount)
	}
	var embedded int
	for _, it := range got.Items {
		embedded += len(it.Images)
		if it.Kind == transcript.UserPrompt && it.Text != "" {
			t.Errorf("image-only prompt has text %q", it.Text)
		}
	}
	if embedded != 1 {
		t.Errorf("embedded %d images, want 1", embedded)
	}
	if len(got.Warnings) != 2 || !strings.Contains(got.Warnings[0], "not valid base64") || !strings.Contains(got.Warnings[1], "per-image cap") {
		t.Errorf("warnings = %q, want a base64 and a cap warning", got.Warnings)
	}
	if got.FirstPrompt != "" || got.Title != "" {
		t.Errorf("image-only session has first prompt %q, title %q", got.FirstPrompt, got.Title)
	}
}

func TestParseCWD(t *testing.T) {
	tests := []struct {
		name, path, cwd, parent string
	}{
		{"slug dir with .project_root", alpha, "/work/alpha", ""},
		{"hash dir resolved through projects.json", "testdata/home/.gemini/tmp/b4e242277325fc7c30dcbd857f7e4df9301def408b36b206c4b1456387196258/chats/session-2025-12-24T18-30-beefbeef.jsonl", "/work/beta", ""},
		{"unknown slug resolved by the record's projectHash", "testdata/home/.gemini/tmp/gamma-old/chats/session-2026-01-05T07-00-99999999.jsonl", "/work/gamma", ""},
		{"subagent chat under its parent's id", "testdata/home/.gemini/tmp/alpha/chats/a1b2c3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d/5a5a5a5a-0000-4000-8000-000000000001.jsonl", "/work/alpha", "a1b2c3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseFile(t, tt.path, transcript.ParseOptions{})
			if got.CWD != tt.cwd || got.ParentID != tt.parent {
				t.Errorf("cwd, parent = %q, %q; want %q, %q", got.CWD, got.ParentID, tt.cwd, tt.parent)
			}
		})
	}
	t.Run("session_context names the workspace when nothing else does", func(t *testing.T) {
		got := parseText(t, "s.jsonl", `{"id":"c","type":"user","content":[{"text":"<session_context>\n- **Workspace Directories:**\n  - /srv/app\n  - /srv/lib\n</session_context>"}]}`+"\n")
		if got.CWD != "/srv/app" || got.PromptCount != 0 {
			t.Errorf("cwd = %q, prompts = %d; want /srv/app, 0", got.CWD, got.PromptCount)
		}
	})
	t.Run("nothing resolves", func(t *testing.T) {
		if got := parseText(t, "s.jsonl", `{"id":"a","type":"user","content":"x"}`+"\n"); got.CWD != "" {
			t.Errorf("cwd = %q, want empty", got.CWD)
		}
	})
}

func TestParseSnapshotAndLegacyMigration(t *testing.T) {
	beta := parseFile(t, "testdata/home/.gemini/tmp/b4e242277325fc7c30dcbd857f7e4df9301def408b36b206c4b1456387196258/chats/session-2025-12-24T18-30-beefbeef.jsonl", transcript.ParseOptions{})
	if beta.FirstPrompt != "Summarise the compressed history" || beta.PromptCount != 1 {
		t.Errorf("snapshot: first prompt %q, count %d", beta.FirstPrompt, beta.PromptCount)
	}
	legacy := parseFile(t, "testdata/home/.gemini/tmp/alpha/chats/session-2026-10-01T08-00-c0ffee00.json", transcript.ParseOptions{})
	migrated := parseFile(t, "testdata/home/.gemini/tmp/alpha/chats/session-2026-10-01T08-00-c0ffee00.jsonl", transcript.ParseOptions{})
	if legacy.ID != migrated.ID || legacy.Title != "Rename the config loader" || legacy.PromptCount != 1 || migrated.PromptCount != 2 {
		t.Errorf("legacy %q %q %d, migrated %q %d", legacy.ID, legacy.Title, legacy.PromptCount, migrated.ID, migrated.PromptCount)
	}
}

func TestSummaryOnlyMatchesFull(t *testing.T) {
	files, err := filepath.Glob("testdata/home/.gemini/tmp/*/chats/*.json*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	sub, _ := filepath.Glob("testdata/home/.gemini/tmp/*/chats/*/*.jsonl")
	for _, f := range append(files, sub...) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			full := parseFile(t, f, transcript.ParseOptions{})
			sum := parseFile(t, f, transcript.ParseOptions{SummaryOnly: true})
			if len(sum.Items) != 0 {
				t.Errorf("summary parse built %d items", len(sum.Items))
			}
			if diff := cmp.Diff(full.Session, sum.Session); diff != "" {
				t.Errorf("summary differs from full (-full +summary):\n%s", diff)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	home, err := filepath.Abs("testdata/home")
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(home, ".gemini", "tmp")
	want := []string{
		filepath.Join(tmp, "alpha/chats/a1b2c3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d/5a5a5a5a-0000-4000-8000-000000000001.jsonl"),
		filepath.Join(tmp, "alpha/chats/session-2026-10-01T08-00-c0ffee00.jsonl"),
		filepath.Join(tmp, "alpha/chats/session-2026-11-02T09-15-a1b2c3d4.jsonl"),
		filepath.Join(tmp, "b4e242277325fc7c30dcbd857f7e4df9301def408b36b206c4b1456387196258/chats/session-2025-12-24T18-30-beefbeef.jsonl"),
		filepath.Join(tmp, "gamma-old/chats/session-2026-01-05T07-00-99999999.jsonl"),
	}
	paths := func(env transcript.Env) []string {
		files, err := New().Discover(t.Context(), env)
		if err != nil {
			t.Fatalf("Discover: %v", err)
		}
		var out []string
		for _, f := range files {
			if f.Size <= 0 || f.ModTime.IsZero() {
				t.Errorf("%s: size %d, mtime %v", f.Path, f.Size, f.ModTime)
			}
			out = append(out, f.Path)
		}
		slices.Sort(out)
		return out
	}
	t.Run("home", func(t *testing.T) {
		if diff := cmp.Diff(want, paths(transcript.Env{Home: home})); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
	})
	t.Run("GEMINI_CLI_HOME replaces home", func(t *testing.T) {
		env := transcript.Env{Home: t.TempDir(), Getenv: func(k string) string {
			if k == "GEMINI_CLI_HOME" {
				return home
			}
			return ""
		}}
		if diff := cmp.Diff(want, paths(env)); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{tmp}, New().Roots(env)); diff != "" {
			t.Errorf("roots (-want +got):\n%s", diff)
		}
	})
	t.Run("missing root", func(t *testing.T) {
		if got := paths(transcript.Env{Home: t.TempDir()}); len(got) != 0 {
			t.Errorf("files = %q, want none", got)
		}
	})
	t.Run("unreadable chats directory", func(t *testing.T) {
		h := t.TempDir()
		dir := filepath.Join(h, ".gemini", "tmp", "p", "chats")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "session-x.jsonl"), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		paths(transcript.Env{Home: h}) // must not fail
	})
	t.Run("no home", func(t *testing.T) {
		if roots := New().Roots(transcript.Env{}); roots != nil {
			t.Errorf("roots = %q, want none", roots)
		}
	})
}

func TestParseErrors(t *testing.T) {
	_, err := New().Parse(t.Context(), transcript.Env{}, filepath.Join(t.TempDir(), "missing.jsonl"), transcript.ParseOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "read gemini transcript: ") {
		t.Errorf("err = %v, want a read error", err)
	}
}
