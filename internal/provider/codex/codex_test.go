package codex

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
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/musterhq/muster/internal/transcript"
)

const (
	home    = "testdata/home"
	tuiPath = home + "/sessions/2026/11/30/rollout-2026-11-30T14-02-11-01a23000-1111-7222-8333-444455556666.jsonl"
	execPth = home + "/sessions/2025/09/14/rollout-2025-09-14T08-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
	subPath = home + "/sessions/2026/01/03/rollout-2026-01-03T09-30-05-0199c000-aaaa-7bbb-8ccc-ddddeeeeffff.jsonl"
	tsPath  = home + "/sessions/rollout-2025-05-01-5f0c2a9e-1b3d-4e6f-8a7b-9c0d1e2f3a4b.json"
	barePth = home + "/sessions/rollout-7a1e9c44-2b5d-4c6e-9f70-81a2b3c4d5e6.jsonl"
	archPth = home + "/archived_sessions/rollout-2025-12-24T18-00-00-0199b111-2222-7333-8444-555566667777.jsonl"
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

func writeLines(t testing.TB, name string, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestDiscover(t *testing.T) {
	abs, _ := filepath.Abs(home)
	t.Run("CODEX_HOME layouts", func(t *testing.T) {
		env := testEnv(t, map[string]string{"CODEX_HOME": abs})
		files, err := New().Discover(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range files {
			r, _ := filepath.Rel(abs, f.Path)
			got = append(got, filepath.ToSlash(r))
			if f.Size == 0 || f.ModTime.IsZero() {
				t.Errorf("%s not stat'ed", f.Path)
			}
		}
		slices.Sort(got)
		var want []string
		for _, p := range []string{tuiPath, execPth, subPath, tsPath, barePth, archPth} {
			want = append(want, strings.TrimPrefix(p, home+"/"))
		}
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("files (-want +got):\n%s", diff)
		}
		if roots := New().Roots(env); !slices.Equal(roots, []string{filepath.Join(abs, "sessions"), filepath.Join(abs, "archived_sessions")}) {
			t.Fatalf("roots = %v", roots)
		}
	})
	t.Run("defaults to ~/.codex", func(t *testing.T) {
		env := testEnv(t, nil)
		dir := filepath.Join(env.Home, ".codex", "sessions", "2026", "01", "01")
		os.MkdirAll(dir, 0o755)
		path := filepath.Join(dir, "rollout-x.jsonl")
		os.WriteFile(path, []byte("{}\n"), 0o644)
		files, err := New().Discover(context.Background(), env)
		if err != nil || len(files) != 1 || files[0].Path != path {
			t.Fatalf("files = %+v, err = %v", files, err)
		}
	})
	t.Run("missing root", func(t *testing.T) {
		files, err := New().Discover(context.Background(), testEnv(t, map[string]string{"CODEX_HOME": filepath.Join(t.TempDir(), "no")}))
		if err != nil || len(files) != 0 {
			t.Fatalf("files = %v, err = %v", files, err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := New().Discover(ctx, testEnv(t, map[string]string{"CODEX_HOME": abs})); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestParseSessions(t *testing.T) {
	tests := []struct {
		path string
		want transcript.Session
	}{
		{tuiPath, transcript.Session{
			ID: "01a23000-1111-7222-8333-444455556666", CWD: "/home/dev/store",
			Title: "TestStoreReload is flaky.", FirstPrompt: "TestStoreReload is flaky.\nFind out why.",
			PromptCount: 3, ToolCallCount: 5, Model: "gpt-6.1-mini",
			StartedAt: at("2026-11-30T14:02:11Z"), EndedAt: at("2026-11-30T14:05:02Z"),
			Usage: &transcript.Usage{Input: 8000, CacheRead: 16000, CacheWrite: 1000, Output: 900, Reasoning: 250},
			UsageByModel: map[string]transcript.Usage{
				"gpt-6.1":      {Input: 6000, CacheRead: 12000, CacheWrite: 1000, Output: 700, Reasoning: 200},
				"gpt-6.1-mini": {Input: 2000, CacheRead: 4000, Output: 200, Reasoning: 50},
			},
			Compactions: []transcript.CompactionMark{{Time: at("2026-11-30T14:05:00Z")}},
			Warnings:    []string{"line 39: not a JSON object; skipped", "line 40: malformed JSON; skipped"},
		}},
		{execPth, transcript.Session{
			ID: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", CWD: "/home/dev/site",
			Title: "Shrink the hero image on the landing page.", FirstPrompt: "Shrink the hero image on the landing page.",
			PromptCount: 1, ToolCallCount: 2, Model: "gpt-5-codex",
			StartedAt: at("2025-09-14T08:00:00Z"), EndedAt: at("2025-09-14T08:00:05.1Z"),
			Usage:        &transcript.Usage{Input: 2200, CacheRead: 3000, Output: 410, Reasoning: 190},
			UsageByModel: map[string]transcript.Usage{"gpt-5-codex": {Input: 2200, CacheRead: 3000, Output: 410, Reasoning: 190}},
			Warnings:     []string{"line 6: image not embedded: not a raster image in base64"},
		}},
		{subPath, transcript.Session{
			ID: "0199c000-aaaa-7bbb-8ccc-ddddeeeeffff", ParentID: "0199bfff-0000-7000-8000-000000000001", CWD: "/home/dev/store",
			Title: "Audit store/ for data races.", FirstPrompt: "Audit store/ for data races.",
			PromptCount: 1, ToolCallCount: 1, Model: "gpt-5.2-codex",
			StartedAt: at("2026-01-03T09:30:05Z"), EndedAt: at("2026-01-03T09:30:21Z"),
		}},
		{tsPath, transcript.Session{
			ID:    "5f0c2a9e-1b3d-4e6f-8a7b-9c0d1e2f3a4b",
			Title: "rename the package to storage", FirstPrompt: "rename the package to storage",
			PromptCount: 1, ToolCallCount: 1,
			StartedAt: at("2025-05-01T12:00:00Z"), EndedAt: at("2025-05-01T12:00:00Z"),
			Warnings: []string{"item 6: not a JSON object; skipped"},
		}},
		{barePth, transcript.Session{
			ID:    "7a1e9c44-2b5d-4c6e-9f70-81a2b3c4d5e6",
			Title: "what does make release do?", FirstPrompt: "what does make release do?",
			PromptCount: 1, ToolCallCount: 1,
			StartedAt: at("2025-07-02T16:20:00Z"), EndedAt: at("2025-07-02T16:20:00Z"),
		}},
		{archPth, transcript.Session{
			ID: "0199b111-2222-7333-8444-555566667777", CWD: "/home/dev/notes",
			Title: "summarise TODO.md", FirstPrompt: "summarise TODO.md", PromptCount: 1,
			StartedAt: at("2025-12-24T18:00:00Z"), EndedAt: at("2025-12-24T18:00:03Z"),
		}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			tt.want.Provider, tt.want.Path = "codex", tt.path
			full := parseOne(t, tt.path)
			if diff := cmp.Diff(tt.want, full.Session); diff != "" {
				t.Fatalf("session (-want +got):\n%s", diff)
			}
			sum := parse(t, tt.path, transcript.ParseOptions{SummaryOnly: true})[0]
			tt.want.Warnings = slices.DeleteFunc(tt.want.Warnings, func(w string) bool { return strings.Contains(w, "image") })
			if diff := cmp.Diff(tt.want, sum.Session, cmpopts.EquateEmpty()); diff != "" || sum.Items != nil {
				t.Fatalf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

type item struct {
	Kind            transcript.ItemKind
	Text, Tool, Raw string
	Call, Input     string
	IsErr           bool
	Images          int
}

func items(tr *transcript.Transcript) []item {
	var out []item
	for _, it := range tr.Items {
		out = append(out, item{it.Kind, it.Text, it.Tool, it.RawTool, it.CallID, string(it.Input), it.IsError, len(it.Images)})
	}
	return out
}

func TestItems(t *testing.T) {
	t.Run("0.169 TUI", func(t *testing.T) {
		tr := parseOne(t, tuiPath)
		want := []item{
			{Kind: transcript.UserPrompt, Text: "TestStoreReload is flaky.\nFind out why."},
			{Kind: transcript.Thinking, Text: "**Reproducing the flake**\n\nRun the test repeatedly."},
			{Kind: transcript.ToolUse, Tool: "Bash", Raw: "exec_command", Call: "call_1", Input: `{"command":"go test ./store -run TestStoreReload -count 20","description":"reproduce the flake","workdir":"/home/dev/store"}`},
			{Kind: transcript.ToolResult, Tool: "Bash", Raw: "exec_command", Call: "call_1", IsErr: true,
				Text: "Chunk ID: 4be1\nWall time: 2.9 seconds\nProcess exited with code 1\nOutput:\n--- FAIL: TestStoreReload (0.01s)\n    reload_test.go:31: stale entry\nFAIL\n"},
			{Kind: transcript.ToolUse, Tool: "ApplyPatch", Raw: "apply_patch", Call: "call_2", Input: `{"patch":"*** Begin Patch\n*** Update File: store/reload.go\n@@\n-\tif s.loaded {\n+\tif s.loaded.Load() {\n*** End Patch\n"}`},
			{Kind: transcript.ToolResult, Tool: "ApplyPatch", Raw: "apply_patch", Call: "call_2", Text: "Success. Updated the following files:\nM store/reload.go\n"},
			{Kind: transcript.AssistantText, Text: "The loaded flag was read without synchronisation; it is atomic now."},
			{Kind: transcript.UserPrompt, Text: "run the whole suite and look up the atomic docs"},
			{Kind: transcript.ToolUse, Tool: "Bash", Raw: "shell", Call: "call_3", Input: `{"command":"go test ./...","timeout_ms":120000,"workdir":"/home/dev/store"}`},
			{Kind: transcript.ToolResult, Tool: "Bash", Raw: "shell", Call: "call_3", Text: "ok  \tstore\t1.2s\n"},
			{Kind: transcript.ToolUse, Tool: "Bash", Raw: "local_shell", Call: "call_4", Input: `{"command":"git commit -m 'store: make loaded atomic'","timeout_ms":10000,"workdir":"/home/dev/store"}`},
			{Kind: transcript.ToolResult, Tool: "Bash", Raw: "local_shell", Call: "call_4", Text: "nothing added to commit\n", IsErr: true},
			{Kind: transcript.ToolUse, Tool: "WebSearch", Raw: "web_search", Call: "ws_1", Input: `{"query":"go sync/atomic Bool"}`},
			{Kind: transcript.Compaction},
			{Kind: transcript.UserPrompt, Text: "thanks"},
		}
		if diff := cmp.Diff(want, items(tr)); diff != "" {
			t.Fatalf("items (-want +got):\n%s", diff)
		}
		b, _ := json.Marshal(tr)
		for _, leak := range []string{"COMPACTION-SUMMARY", "ENCRYPTED", "environment_context", "turn_aborted", "permissions instructions"} {
			if strings.Contains(string(b), leak) {
				t.Errorf("transcript contains %q", leak)
			}
		}
	})
	t.Run("exec with duplicated events", func(t *testing.T) {
		tr := parseOne(t, execPth)
		want := []item{
			{Kind: transcript.UserPrompt, Text: "Shrink the hero image on the landing page.", Images: 1},
			{Kind: transcript.Thinking, Text: "**Finding the hero image**"},
			{Kind: transcript.ToolUse, Tool: "Bash", Raw: "shell", Call: "call_h1", Input: `{"command":"rg -l 'hero image' src/","workdir":"/home/dev/site"}`},
			{Kind: transcript.ToolResult, Tool: "Bash", Raw: "shell", Call: "call_h1", Text: "src/landing.css\n"},
			{Kind: transcript.ToolUse, Tool: "ApplyPatch", Raw: "apply_patch", Call: "call_h2", Input: `{"patch":"*** Begin Patch\n*** Update File: src/landing.css\n@@\n-.hero { width: 1600px; }\n+.hero { width: 800px; }\n*** End Patch\n"}`},
			{Kind: transcript.ToolResult, Tool: "ApplyPatch", Raw: "apply_patch", Call: "call_h2", Text: "Success. Updated the following files:\nM src/landing.css\n"},
			{Kind: transcript.AssistantText, Text: "Halved the hero width in src/landing.css."},
		}
		if diff := cmp.Diff(want, items(tr)); diff != "" {
			t.Fatalf("items (-want +got):\n%s", diff)
		}
		if img := tr.Items[0].Images[0]; img.MIME != "image/png" || !strings.HasPrefix(img.DataURL, "data:image/png;base64,iVBOR") {
			t.Fatalf("image = %+v", img)
		}
	})
	t.Run("forked sub-agent skips its parent's records", func(t *testing.T) {
		want := []item{
			{Kind: transcript.UserPrompt, Text: "Audit store/ for data races."},
			{Kind: transcript.ToolUse, Tool: "Bash", Raw: "exec_command", Call: "call_c1", Input: `{"command":"go test -race ./store/..."}`},
			{Kind: transcript.ToolResult, Tool: "Bash", Raw: "exec_command", Call: "call_c1", Text: "Exit code: 0\nWall time: 14 seconds\nOutput:\nok  store 13.2s\n"},
			{Kind: transcript.AssistantText, Text: "No data races found."},
		}
		if diff := cmp.Diff(want, items(parseOne(t, subPath))); diff != "" {
			t.Fatalf("items (-want +got):\n%s", diff)
		}
	})
	t.Run("TypeScript document", func(t *testing.T) {
		want := []item{
			{Kind: transcript.UserPrompt, Text: "rename the package to storage"},
			{Kind: transcript.ToolUse, Tool: "Bash", Raw: "local_shell", Call: "call_1", Input: `{"command":"grep -rl 'package store' .","timeout_ms":10000}`},
			{Kind: transcript.ToolResult, Tool: "Bash", Raw: "local_shell", Call: "call_1", Text: "./store.go\n"},
			{Kind: transcript.AssistantText, Text: "Only store.go declares it."},
		}
		if diff := cmp.Diff(want, items(parseOne(t, tsPath))); diff != "" {
			t.Fatalf("items (-want +got):\n%s", diff)
		}
	})
	t.Run("bare legacy rollout", func(t *testing.T) {
		want := []item{
			{Kind: transcript.UserPrompt, Text: "what does make release do?"},
			{Kind: transcript.ToolUse, Tool: "Bash", Raw: "shell", Call: "call_m1", Input: `{"command":"sed -n '/^release:/,/^$/p' Makefile"}`},
			{Kind: transcript.ToolResult, Tool: "Bash", Raw: "shell", Call: "call_m1", Text: "release:\n\tgoreleaser\n"},
			{Kind: transcript.AssistantText, Text: "It runs goreleaser."},
		}
		if diff := cmp.Diff(want, items(parseOne(t, barePth))); diff != "" {
			t.Fatalf("items (-want +got):\n%s", diff)
		}
	})
}

func TestPromptSources(t *testing.T) {
	ev := func(s string) string {
		return `{"type":"event_msg","payload":{"type":"user_message","message":"` + s + `"}}`
	}
	ic := func(s string) string {
		return `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"` + s + `"}]}}}`
	}
	ri := func(s string) string {
		return `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + s + `"}]}}`
	}
	tests := []struct {
		name  string
		lines []string
		count int
		first string
	}{
		{"user_message events win", []string{ri("a"), ev("a"), ic("a"), ri("b"), ev("b")}, 2, "a"},
		{"then item_completed", []string{ri("a"), ic("a"), ri("b"), ic("b"), ri("c")}, 2, "a"},
		{"then response items", []string{ri("<environment_context>x</environment_context>"), ri("# AGENTS.md instructions for /x"), ri("real"), ri("<turn_aborted>\\nx\\n</turn_aborted>")}, 1, "real"},
		{"a tag block is context", []string{ri("<some_new_context>x</some_new_context>"), ri("<b>bold</b> claim")}, 1, "<b>bold</b> claim"},
		{"empty messages are not prompts", []string{ev(""), ev("  "), ev("x")}, 1, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := parseOne(t, writeLines(t, "rollout-x.jsonl", tt.lines...))
			if tr.PromptCount != tt.count || tr.FirstPrompt != tt.first {
				t.Fatalf("count %d first %q, want %d %q", tr.PromptCount, tr.FirstPrompt, tt.count, tt.first)
			}
			n := 0
			for _, it := range tr.Items {
				if it.Kind == transcript.UserPrompt {
					n++
				}
			}
			if n != tt.count {
				t.Fatalf("%d prompt items, want %d", n, tt.count)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	tc := func(model string) string { return `{"type":"turn_context","payload":{"model":"` + model + `"}}` }
	count := func(in, cached, out int) string {
		b, _ := json.Marshal(map[string]any{"type": "event_msg", "payload": map[string]any{"type": "token_count", "info": map[string]any{
			"total_token_usage": map[string]int{"input_tokens": in, "cached_input_tokens": cached, "output_tokens": out}}}})
		return string(b)
	}
	record := func(in, out int) string {
		b, _ := json.Marshal(map[string]any{"type": "token_usage_record", "payload": map[string]any{"thread_token_usage": map[string]int{"input_tokens": in, "output_tokens": out}}})
		return string(b)
	}
	tests := []struct {
		name    string
		lines   []string
		want    *transcript.Usage
		byModel map[string]transcript.Usage
	}{
		{"last total wins, duplicates harmless", []string{tc("m"), count(100, 40, 10), count(100, 40, 10), count(300, 200, 30)},
			&transcript.Usage{Input: 100, CacheRead: 200, Output: 30}, map[string]transcript.Usage{"m": {Input: 100, CacheRead: 200, Output: 30}}},
		{"increases go to the current model", []string{tc("a"), count(100, 0, 10), tc("b"), count(250, 0, 15)},
			&transcript.Usage{Input: 250, Output: 15}, map[string]transcript.Usage{"a": {Input: 100, Output: 10}, "b": {Input: 150, Output: 5}}},
		{"null info is skipped", []string{`{"type":"event_msg","payload":{"type":"token_count","info":null}}`}, nil, nil},
		{"token_usage_record without token_count", []string{tc("m"), record(10, 1), record(30, 4)},
			&transcript.Usage{Input: 30, Output: 4}, map[string]transcript.Usage{"m": {Input: 30, Output: 4}}},
		{"token_count preferred over token_usage_record", []string{tc("m"), record(999, 9), count(10, 0, 1)},
			&transcript.Usage{Input: 10, Output: 1}, map[string]transcript.Usage{"m": {Input: 10, Output: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := append([]string{`{"type":"event_msg","payload":{"type":"user_message","message":"hi"}}`}, tt.lines...)
			tr := parseOne(t, writeLines(t, "rollout-x.jsonl", lines...))
			if diff := cmp.Diff(tt.want, tr.Usage); diff != "" {
				t.Fatalf("usage (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.byModel, tr.UsageByModel, cmpEmptyMap); diff != "" {
				t.Fatalf("by model (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmptyMap = cmp.FilterValues(func(a, b map[string]transcript.Usage) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func TestNormalizeTool(t *testing.T) {
	tests := []struct {
		name, tool, args string
		want, input      string
	}{
		{"exec_command string", "exec_command", `{"cmd":"ls -la","justification":"look"}`, "Bash", `{"command":"ls -la","description":"look"}`},
		{"exec_command argv", "exec_command", `{"cmd":["ls","-la","my dir"]}`, "Bash", `{"command":"ls -la 'my dir'"}`},
		{"shell bash -lc", "shell", `{"command":["/bin/bash","-lc","echo 'hi' | wc -c"]}`, "Bash", `{"command":"echo 'hi' | wc -c"}`},
		{"shell quoting", "shell", `{"command":["printf","%s\n","it's"]}`, "Bash", `{"command":"printf '%s\n' 'it'\"'\"'s'"}`},
		{"shell empty word", "shell", `{"command":["echo",""]}`, "Bash", `{"command":"echo ''"}`},
		{"shell_command", "shell_command", `{"command":"make test","workdir":"/x"}`, "Bash", `{"command":"make test","workdir":"/x"}`},
		{"container.exec", "container.exec", `{"command":["ls"]}`, "Bash", `{"command":"ls"}`},
		{"apply_patch input", "apply_patch", `{"input":"*** Begin Patch"}`, "ApplyPatch", `{"patch":"*** Begin Patch"}`},
		{"apply_patch patch", "apply_patch", `{"patch":"*** Begin Patch"}`, "ApplyPatch", `{"patch":"*** Begin Patch"}`},
		{"apply_patch bare text", "apply_patch", `*** Begin Patch`, "ApplyPatch", `{"patch":"*** Begin Patch"}`},
		{"read_file", "read_file", `{"path":"a.go","offset":1}`, "Read", `{"file_path":"a.go","offset":1}`},
		{"list_dir", "list_dir", `{"dir_path":"src"}`, "LS", `{"path":"src"}`},
		{"grep_files", "grep_files", `{"pattern":"TODO","path":"."}`, "Grep", `{"pattern":"TODO","path":"."}`},
		{"spawn_agent", "spawn_agent", `{"message":"go"}`, "Task", `{"message":"go"}`},
		{"no arguments", "shell_command", ``, "Bash", ``},
		{"mcp passes through", "mcp__gh__search", `{"q":"x"}`, "mcp__gh__search", `{"q":"x"}`},
		{"unknown passes through", "update_plan", `{"plan":[]}`, "update_plan", `{"plan":[]}`},
		{"non-object arguments", "exec_command", `"ls"`, "Bash", `"ls"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, input := NormalizeTool(tt.tool, []byte(tt.args))
			if tool != tt.want || string(input) != tt.input {
				t.Fatalf("got %s %s, want %s %s", tool, input, tt.want, tt.input)
			}
		})
	}
}

func TestOutputText(t *testing.T) {
	tests := []struct {
		name, raw, text string
		isErr           bool
	}{
		{"plain", `"ok"`, "ok", false},
		{"exit code 0", `"Process exited with code 0\nOutput:\nok"`, "Process exited with code 0\nOutput:\nok", false},
		{"exit code 2", `"Exit code: 2\nOutput:\nboom"`, "Exit code: 2\nOutput:\nboom", true},
		{"aborted", `"Wall time: 12.5 seconds\naborted by user"`, "Wall time: 12.5 seconds\naborted by user", true},
		{"json metadata ok", `"{\"output\":\"x\",\"metadata\":{\"exit_code\":0}}"`, "x", false},
		{"json metadata failed", `"{\"output\":\"x\",\"metadata\":{\"exit_code\":127}}"`, "x", true},
		{"object with success", `{"content":"denied","success":false}`, "denied", true},
		{"content array", `[{"type":"output_text","text":"a"},{"type":"output_text","text":"b"}]`, "a\nb", false},
		{"null", `null`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, isErr := outputText([]byte(tt.raw))
			if text != tt.text || isErr != tt.isErr {
				t.Fatalf("got (%q, %v), want (%q, %v)", text, isErr, tt.text, tt.isErr)
			}
		})
	}
	path := writeLines(t, "rollout-x.jsonl",
		`{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"fine","success":false}}`)
	if tr := parseOne(t, path); !tr.Items[1].IsError {
		t.Fatal("success:false not an error")
	}
}

func TestReadSessionMeta(t *testing.T) {
	tests := []struct {
		path string
		want SessionMeta
	}{
		{tuiPath, SessionMeta{ID: "01a23000-1111-7222-8333-444455556666", CWD: "/home/dev/store", Interactive: true, Originator: "codex-tui", Source: "cli", CLIVersion: "0.169.0", StartedAt: at("2026-11-30T14:02:11Z")}},
		{execPth, SessionMeta{ID: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", CWD: "/home/dev/site", Originator: "codex_exec", Source: "exec", CLIVersion: "0.36.0", StartedAt: at("2025-09-14T08:00:00Z")}},
		{subPath, SessionMeta{ID: "0199c000-aaaa-7bbb-8ccc-ddddeeeeffff", CWD: "/home/dev/store", Originator: "codex_cli_rs", Source: "subagent", ParentID: "0199bfff-0000-7000-8000-000000000001", CLIVersion: "0.80.0", StartedAt: at("2026-01-03T09:30:05Z")}},
		{archPth, SessionMeta{ID: "0199b111-2222-7333-8444-555566667777", CWD: "/home/dev/notes", Originator: "codex_vscode", Source: "vscode", CLIVersion: "0.77.0", StartedAt: at("2025-12-24T18:00:00Z")}},
		{tsPath, SessionMeta{ID: "5f0c2a9e-1b3d-4e6f-8a7b-9c0d1e2f3a4b", StartedAt: at("2025-05-01T12:00:00Z")}},
		{barePth, SessionMeta{ID: "7a1e9c44-2b5d-4c6e-9f70-81a2b3c4d5e6", StartedAt: at("2025-07-02T16:20:00Z")}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			got, err := ReadSessionMeta(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		if _, err := ReadSessionMeta(filepath.Join(t.TempDir(), "none.jsonl")); err == nil {
			t.Fatal("missing file: no error")
		}
		noMeta := writeLines(t, "rollout-x.jsonl", `{"type":"event_msg","payload":{"type":"user_message","message":"hi"}}`, `not json`)
		if _, err := ReadSessionMeta(noMeta); err == nil || !strings.Contains(err.Error(), "no session_meta") {
			t.Fatalf("err = %v", err)
		}
		if _, err := ReadSessionMeta(writeLines(t, "rollout-x.json", `[]`)); err == nil {
			t.Fatal("bad document: no error")
		}
	})
	t.Run("reads only the head", func(t *testing.T) {
		lines := []string{`{"type":"session_meta","payload":{"id":"x","originator":"codex-tui","source":"cli"}}`}
		for range 1000 {
			lines = append(lines, `{broken`)
		}
		m, err := ReadSessionMeta(writeLines(t, "rollout-x.jsonl", lines...))
		if err != nil || m.ID != "x" || !m.Interactive {
			t.Fatalf("meta = %+v, err = %v", m, err)
		}
	})
}

func TestIsInteractive(t *testing.T) {
	tests := []struct {
		originator, source string
		subagent           bool
		want               bool
	}{
		{"codex-tui", "cli", false, true},
		{"codex-tui", "vscode", false, true}, // TUI through the app-server daemon
		{"codex_cli_rs", "cli", false, true},
		{"Codex_TUI", "", false, true},
		{"", "cli", false, true},
		{"", "", false, false},
		{"codex_exec", "exec", false, false},
		{"codex_cli_rs", "exec", false, false},
		{"codex-tui", "mcp", false, false},
		{"codex_cli_rs", "subagent", true, false},
		{"codex_vscode", "vscode", false, false},
		{"Codex Desktop", "vscode", false, false},
	}
	for _, tt := range tests {
		if got := isInteractive(tt.originator, tt.source, tt.subagent); got != tt.want {
			t.Errorf("isInteractive(%q, %q, %v) = %v, want %v", tt.originator, tt.source, tt.subagent, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	if _, err := New().Parse(context.Background(), testEnv(t, nil), filepath.Join(t.TempDir(), "x.jsonl"), transcript.ParseOptions{}); err == nil || !strings.Contains(err.Error(), "open codex rollout") {
		t.Fatalf("err = %v", err)
	}
	tests := []struct{ name, doc, warning string }{
		{"malformed document", `{"session":`, "document is malformed JSON"},
		{"array document", `[1]`, "document is not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeLines(t, "rollout-x.json", tt.doc)
			ts, err := New().Parse(context.Background(), testEnv(t, nil), path, transcript.ParseOptions{})
			if err != nil || len(ts) != 0 {
				t.Fatalf("ts = %v, err = %v", ts, err)
			}
			f, _ := os.Open(path)
			defer f.Close()
			p := newParser(path, transcript.ParseOptions{})
			if err := p.legacyDocument(f); err != nil || !slices.Equal(p.t.Warnings, []string{tt.warning}) {
				t.Fatalf("warnings %v, err %v", p.t.Warnings, err)
			}
		})
	}
	lines := make([]string, 10000)
	for i := range lines {
		lines[i] = `{"type":"event_msg","payload":{"type":"user_message","message":"x"}}`
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Parse(ctx, testEnv(t, nil), writeLines(t, "rollout-x.jsonl", lines...), transcript.ParseOptions{}); err == nil {
		t.Fatal("cancelled parse succeeded")
	}
}
