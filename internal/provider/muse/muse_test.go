package muse

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

// testEnv is an environment whose home and agents root are temporary.
func testEnv(t testing.TB, vars map[string]string) transcript.Env {
	t.Helper()
	home := t.TempDir()
	return transcript.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
}

// writeAgent writes <root>/<agent>/sessions/<agent>.jsonl and returns its path.
func writeAgent(t testing.TB, root, agent string, lines ...string) string {
	t.Helper()
	path := filepath.Join(root, agent, "sessions", agent+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func parse(t testing.TB, env transcript.Env, path string, opts transcript.ParseOptions) []*transcript.Transcript {
	t.Helper()
	ts, err := New().Parse(context.Background(), env, path, opts)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return ts
}

func parseOne(t testing.TB, env transcript.Env, path string) *transcript.Transcript {
	t.Helper()
	ts := parse(t, env, path, transcript.ParseOptions{})
	if len(ts) != 1 {
		t.Fatalf("parse %s: %d transcripts, want 1", path, len(ts))
	}
	return ts[0]
}

func fixture(agent string) string {
	return filepath.Join("testdata", "agents", agent, "sessions", agent+".jsonl")
}

func kinds(items []transcript.Item) []transcript.ItemKind {
	var out []transcript.ItemKind
	for _, it := range items {
		out = append(out, it.Kind)
	}
	return out
}

func item(msg string) string {
	return `{"type":"item","seq":1,"source":"runtime","created_at":"2026-10-12T09:00:00Z","item":` + msg + `}`
}

func userItem(source, text string) string {
	b, _ := json.Marshal(text)
	return `{"type":"item","seq":1,"source":"` + source + `","created_at":"2026-10-12T09:00:00Z","item":{"type":"message","role":"user","text":` + string(b) + `}}`
}

// TestSeed has one test per statement of seed 002, in the seed's order.
func TestSeed(t *testing.T) {
	t.Run("agents root comes from MUSE_AGENTS_DIR", func(t *testing.T) {
		root := t.TempDir()
		env := testEnv(t, map[string]string{"MUSE_AGENTS_DIR": root})
		path := writeAgent(t, root, "a1", userItem("runtime", "hi"))
		files, err := New().Discover(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 1 || files[0].Path != path {
			t.Fatalf("files = %+v, want %s", files, path)
		}
		if got := New().Roots(env); !slices.Equal(got, []string{root}) {
			t.Fatalf("roots = %v", got)
		}
	})
	t.Run("agents root defaults to ~/agents", func(t *testing.T) {
		env := testEnv(t, nil)
		path := writeAgent(t, filepath.Join(env.Home, "agents"), "a1", userItem("runtime", "hi"))
		files, err := New().Discover(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 1 || files[0].Path != path {
			t.Fatalf("files = %+v, want %s", files, path)
		}
	})
	t.Run("transcript is <agentId>/sessions/<agentId>.jsonl", func(t *testing.T) {
		root := t.TempDir()
		env := testEnv(t, map[string]string{"MUSE_AGENTS_DIR": root})
		want := writeAgent(t, root, "b", userItem("runtime", "hi"))
		writeAgent(t, root, "a", userItem("runtime", "hi"))
		// Not transcripts: another file in sessions/, a dir without
		// sessions/, a stray file at the root, a dot dir.
		os.WriteFile(filepath.Join(root, "a", "sessions", "other.jsonl"), []byte("{}\n"), 0o644)
		os.Rename(filepath.Join(root, "a", "sessions", "a.jsonl"), filepath.Join(root, "a", "sessions", "x.jsonl"))
		os.MkdirAll(filepath.Join(root, "c", "logs"), 0o755)
		os.WriteFile(filepath.Join(root, "README"), nil, 0o644)
		writeAgent(t, root, ".hidden", userItem("runtime", "hi"))
		// A directory where the transcript should be.
		os.MkdirAll(filepath.Join(root, "d", "sessions", "d.jsonl"), 0o755)
		files, err := New().Discover(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 1 || files[0].Path != want {
			t.Fatalf("files = %+v, want only %s", files, want)
		}
		if files[0].Size == 0 || files[0].ModTime.IsZero() {
			t.Fatalf("file not stat'ed: %+v", files[0])
		}
	})
	t.Run("a missing agents root has no sessions", func(t *testing.T) {
		env := testEnv(t, map[string]string{"MUSE_AGENTS_DIR": filepath.Join(t.TempDir(), "nope")})
		files, err := New().Discover(context.Background(), env)
		if err != nil || len(files) != 0 {
			t.Fatalf("files = %v, err = %v", files, err)
		}
	})
	t.Run("an unreadable agent directory is skipped", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads everything")
		}
		root := t.TempDir()
		env := testEnv(t, map[string]string{"MUSE_AGENTS_DIR": root})
		want := writeAgent(t, root, "ok", userItem("runtime", "hi"))
		writeAgent(t, root, "locked", userItem("runtime", "hi"))
		os.Chmod(filepath.Join(root, "locked"), 0)
		t.Cleanup(func() { os.Chmod(filepath.Join(root, "locked"), 0o755) })
		files, err := New().Discover(context.Background(), env)
		if err != nil || len(files) != 1 || files[0].Path != want {
			t.Fatalf("files = %+v, err = %v", files, err)
		}
	})
	t.Run("sessions.json is best-effort: absent is fine", func(t *testing.T) {
		root := t.TempDir()
		tr := parseOne(t, testEnv(t, nil), writeAgent(t, root, "a", userItem("runtime", "hi")))
		if tr.Model != "" || len(tr.Warnings) != 0 {
			t.Fatalf("model %q, warnings %v", tr.Model, tr.Warnings)
		}
	})
	t.Run("session_header gives the session id and start", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		if tr.ID != "ses_01JD8K2M4Q7R" || tr.Provider != "muse" || tr.Path != fixture("ops-7f3a") {
			t.Fatalf("id %q provider %q path %q", tr.ID, tr.Provider, tr.Path)
		}
		if want := time.Date(2026, 10, 12, 8, 59, 58, 120e6, time.UTC); !tr.StartedAt.Equal(want) {
			t.Fatalf("started %v, want %v", tr.StartedAt, want)
		}
		if want := time.Date(2026, 10, 12, 10, 10, 30, 0, time.UTC); !tr.EndedAt.Equal(want) {
			t.Fatalf("ended %v, want %v", tr.EndedAt, want)
		}
		// Without a header the agent id stands in.
		root := t.TempDir()
		if tr := parseOne(t, testEnv(t, nil), writeAgent(t, root, "agent-x", userItem("runtime", "hi"))); tr.ID != "agent-x" {
			t.Fatalf("id without header = %q", tr.ID)
		}
	})
	t.Run("item records carry source and created_at", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		first := tr.Items[0]
		if first.Source != "runtime.feed" || !first.Time.Equal(time.Date(2026, 10, 12, 9, 0, 1, 0, time.UTC)) {
			t.Fatalf("first item = %+v", first)
		}
	})
	t.Run("compaction summary is not replayed, only compactions metadata", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		b, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "SUMMARY-OF-EVERYTHING-BEFORE") {
			t.Fatal("compaction summary leaked into the transcript")
		}
		if len(tr.Compactions) != 1 || tr.Compactions[0].ID != "cmp_01" || tr.Compactions[0].Trigger != "auto" {
			t.Fatalf("compactions = %+v", tr.Compactions)
		}
		var marks []transcript.Item
		for _, it := range tr.Items {
			if it.Kind == transcript.Compaction {
				marks = append(marks, it)
			}
		}
		if len(marks) != 1 || marks[0].Text != "" {
			t.Fatalf("compaction markers = %+v", marks)
		}
	})
	t.Run("compaction created_at epoch seconds is normalised to ISO", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		want := time.Date(2026, 10, 12, 9, 0, 14, 0, time.UTC)
		if !tr.Compactions[0].Time.Equal(want) {
			t.Fatalf("time = %v, want %v", tr.Compactions[0].Time, want)
		}
		b, _ := json.Marshal(tr.Compactions[0])
		if !strings.Contains(string(b), `"time":"2026-10-12T09:00:14Z"`) {
			t.Fatalf("marshalled = %s", b)
		}
		// Fractional seconds survive.
		root := t.TempDir()
		tr = parseOne(t, testEnv(t, nil), writeAgent(t, root, "a", userItem("runtime", "hi"),
			`{"type":"compaction_checkpoint","compaction_id":"c","trigger":"manual","summary":"s","created_at":1791795614.5}`))
		if want := want.Add(500 * time.Millisecond); !tr.Compactions[0].Time.Equal(want) {
			t.Fatalf("time = %v, want %v", tr.Compactions[0].Time, want)
		}
	})
	t.Run("message is plain text by role", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		last := tr.Items[len(tr.Items)-1]
		var assistant []string
		for _, it := range tr.Items {
			if it.Kind == transcript.AssistantText {
				assistant = append(assistant, it.Text)
			}
		}
		if !slices.Contains(assistant, "The upstream pointed at 8081; I changed it to 8080 and wrote an incident note.") {
			t.Fatalf("assistant texts = %q", assistant)
		}
		if last.Kind != transcript.ToolResult {
			t.Fatalf("last item = %+v", last)
		}
	})
	t.Run("message_parts text lives in parts[].text", func(t *testing.T) {
		root := t.TempDir()
		tr := parseOne(t, testEnv(t, nil), writeAgent(t, root, "a",
			item(`{"type":"message_parts","role":"user","parts":[{"type":"text","text":"first"},{"type":"text","text":"second"}]}`),
			item(`{"type":"message_parts","role":"assistant","parts":[{"type":"text","text":"reply"}]}`)))
		if tr.FirstPrompt != "first\nsecond" || tr.Items[0].Text != "first\nsecond" || tr.Items[1].Text != "reply" {
			t.Fatalf("items = %+v", tr.Items)
		}
	})
	t.Run("thinking becomes a thinking block", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		it := tr.Items[2]
		if it.Kind != transcript.Thinking || it.Text != "Check the upstream block first, then the health endpoint." {
			t.Fatalf("item = %+v", it)
		}
	})
	t.Run("commentary_text becomes an assistant text block", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		it := tr.Items[3]
		if it.Kind != transcript.AssistantText || it.Text != "Reading the nginx config." {
			t.Fatalf("item = %+v", it)
		}
	})
	t.Run("function_call arguments JSON string becomes tool_use input", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		it := tr.Items[4]
		if it.Kind != transcript.ToolUse || it.CallID != "call_a1" || it.RawTool != "read" || string(it.Input) != `{"file_path":"deploy/nginx.conf"}` {
			t.Fatalf("item = %+v input %s", it, it.Input)
		}
		if tr.ToolCallCount != 6 {
			t.Fatalf("tool calls = %d, want 6", tr.ToolCallCount)
		}
	})
	t.Run("function_call_output is matched by call_id and success false marks an error", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		res := map[string]transcript.Item{}
		for _, it := range tr.Items {
			if it.Kind == transcript.ToolResult {
				res[it.CallID] = it
			}
		}
		if r := res["call_a2"]; !r.IsError || r.Tool != "Bash" || r.RawTool != "exec" || !strings.HasPrefix(r.Text, "curl: (7)") {
			t.Fatalf("call_a2 result = %+v", r)
		}
		if r := res["call_a1"]; r.IsError || r.Tool != "Read" {
			t.Fatalf("call_a1 result = %+v", r)
		}
		if r := res["call_a5"]; r.Text != `{"hits":0}` {
			t.Fatalf("non-string output = %q", r.Text)
		}
	})
	t.Run("developer messages are skipped", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		for _, it := range tr.Items {
			if strings.Contains(it.Text, "Follow the runbook") {
				t.Fatalf("developer message replayed: %+v", it)
			}
		}
		if tr.PromptCount != 5 {
			t.Fatalf("prompt count = %d, want 5 (developer not counted)", tr.PromptCount)
		}
	})
	t.Run("bare runtime is interactive, dotted sources are counted directives", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		if tr.FirstPrompt != "The deploy on api-2 is failing health checks.\nCan you look at the nginx config?" {
			t.Fatalf("first prompt = %q", tr.FirstPrompt)
		}
		if tr.Title != "The deploy on api-2 is failing health checks." {
			t.Fatalf("title = %q", tr.Title)
		}
		var directives []string
		for _, it := range tr.Items {
			if it.Kind == transcript.UserPrompt && it.Directive {
				directives = append(directives, it.Source)
			}
		}
		if want := []string{"runtime.feed", "scheduler.cron", "runtime.self_improvement"}; !slices.Equal(directives, want) {
			t.Fatalf("directives = %v, want %v", directives, want)
		}
		// A session of directives only has a count but no first prompt.
		root := t.TempDir()
		tr = parseOne(t, testEnv(t, nil), writeAgent(t, root, "cron",
			userItem("scheduler.cron", "hourly"), userItem("runtime.monitoring", "check"), userItem("runtime.feed", "feed")))
		if tr.PromptCount != 3 || tr.FirstPrompt != "" || tr.Title != "" {
			t.Fatalf("count %d first %q title %q", tr.PromptCount, tr.FirstPrompt, tr.Title)
		}
	})
	t.Run("[Subagent Context] messages are skipped for first prompt but counted", func(t *testing.T) {
		root := t.TempDir()
		tr := parseOne(t, testEnv(t, nil), writeAgent(t, root, "sub",
			userItem("runtime", "[Subagent Context]\nlots of boilerplate"), userItem("runtime", "real question")))
		if tr.PromptCount != 2 || tr.FirstPrompt != "real question" || tr.Title != "real question" {
			t.Fatalf("count %d first %q title %q", tr.PromptCount, tr.FirstPrompt, tr.Title)
		}
		if !tr.Items[0].Directive || tr.Items[1].Directive {
			t.Fatalf("directive flags = %v %v", tr.Items[0].Directive, tr.Items[1].Directive)
		}
	})
	t.Run("sessions with only a subagent injection stay discoverable with prompts or tool calls", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("delegate-91c2"))
		if tr.PromptCount != 1 || tr.ToolCallCount != 1 || tr.FirstPrompt != "" {
			t.Fatalf("count %d tools %d first %q", tr.PromptCount, tr.ToolCallCount, tr.FirstPrompt)
		}
		if ts := parse(t, testEnv(t, nil), fixture("idle-04b0"), transcript.ParseOptions{}); len(ts) != 0 {
			t.Fatalf("session without prompts or tool calls returned: %+v", ts[0].Session)
		}
		root := t.TempDir()
		onlyTools := writeAgent(t, root, "t", item(`{"type":"function_call","call_id":"c","name":"exec","arguments":"{\"cmd\":\"ls\"}"}`))
		if ts := parse(t, testEnv(t, nil), onlyTools, transcript.ParseOptions{}); len(ts) != 1 {
			t.Fatal("session with only a tool call not returned")
		}
	})
	t.Run("built-in tools are normalised, namespaced tools pass through", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		type call struct{ tool, raw, input string }
		var got []call
		for _, it := range tr.Items {
			if it.Kind == transcript.ToolUse {
				got = append(got, call{it.Tool, it.RawTool, string(it.Input)})
			}
		}
		want := []call{
			{"Read", "read", `{"file_path":"deploy/nginx.conf"}`},
			{"Bash", "exec", `{"command":"curl -sf localhost:8080/healthz","timeout_ms":5000}`},
			{"Edit", "edit", `{"file_path":"deploy/nginx.conf","new_string":"127.0.0.1:8080","old_string":"127.0.0.1:8081"}`},
			{"Write", "write", `{"content":"# api-2\nupstream port fixed\n","file_path":"notes/incident.md"}`},
			{"memory_search", "memory_search", `{"query":"api-2 upstream"}`},
			{"subagent.spawn", "subagent.spawn", `{"agent":"reviewer","task":"double-check nginx.conf"}`},
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(call{})); diff != "" {
			t.Fatalf("tools (-want +got):\n%s", diff)
		}
	})
	t.Run("token usage is not reported", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		if tr.Usage != nil || tr.UsageByModel != nil {
			t.Fatalf("usage = %+v %+v", tr.Usage, tr.UsageByModel)
		}
	})
	t.Run("model comes from the sessions.json model_id snapshot", func(t *testing.T) {
		if tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a")); tr.Model != "muse-large-2026-09" {
			t.Fatalf("model = %q", tr.Model)
		}
		if tr := parseOne(t, testEnv(t, nil), fixture("delegate-91c2")); tr.Model != "muse-small-2026-08" {
			t.Fatalf("model = %q", tr.Model)
		}
	})
	t.Run("non-object lines and a non-object sessions.json are parse warnings", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("broken-5e11"))
		want := []string{
			"line 2: not a JSON object; skipped",
			"line 3: not a JSON object; skipped",
			"line 5: malformed JSON; skipped",
			"sessions.json: not a JSON object; ignored",
		}
		if diff := cmp.Diff(want, tr.Warnings); diff != "" {
			t.Fatalf("warnings (-want +got):\n%s", diff)
		}
		if tr.PromptCount != 1 || tr.FirstPrompt != "still parsed after the junk above" {
			t.Fatalf("count %d first %q", tr.PromptCount, tr.FirstPrompt)
		}
	})
	t.Run("thinking, tool arguments and tool output are kept for the replay", func(t *testing.T) {
		tr := parseOne(t, testEnv(t, nil), fixture("ops-7f3a"))
		want := []transcript.ItemKind{
			transcript.UserPrompt, transcript.UserPrompt, transcript.Thinking, transcript.AssistantText,
			transcript.ToolUse, transcript.ToolResult, transcript.ToolUse, transcript.ToolResult,
			transcript.ToolUse, transcript.ToolResult, transcript.ToolUse, transcript.ToolResult,
			transcript.ToolUse, transcript.ToolResult, transcript.AssistantText, transcript.Compaction,
			transcript.UserPrompt, transcript.UserPrompt, transcript.UserPrompt, transcript.ToolUse, transcript.ToolResult,
		}
		if diff := cmp.Diff(want, kinds(tr.Items)); diff != "" {
			t.Fatalf("kinds (-want +got):\n%s", diff)
		}
	})
	t.Run("unknown record and item types are skipped silently", func(t *testing.T) {
		root := t.TempDir()
		tr := parseOne(t, testEnv(t, nil), writeAgent(t, root, "u",
			`{"type":"presence_ping"}`, `{"no_type":true}`, item(`{"type":"audio_clip"}`), item(`{"kind":"x"}`),
			`{"type":"item","item":"not an object"}`, userItem("runtime", "hi")))
		if len(tr.Warnings) != 0 || len(tr.Items) != 1 || tr.PromptCount != 1 {
			t.Fatalf("warnings %v items %+v", tr.Warnings, tr.Items)
		}
	})
}

func TestSummaryOnly(t *testing.T) {
	env := testEnv(t, nil)
	full := parseOne(t, env, fixture("ops-7f3a"))
	ts := parse(t, env, fixture("ops-7f3a"), transcript.ParseOptions{SummaryOnly: true})
	if len(ts) != 1 {
		t.Fatal("no transcript")
	}
	if ts[0].Items != nil {
		t.Fatalf("summary parse built %d items", len(ts[0].Items))
	}
	if diff := cmp.Diff(full.Session, ts[0].Session); diff != "" {
		t.Fatalf("summary differs from full parse (-full +summary):\n%s", diff)
	}
}

func TestParseUnreadable(t *testing.T) {
	_, err := New().Parse(context.Background(), testEnv(t, nil), filepath.Join(t.TempDir(), "none.jsonl"), transcript.ParseOptions{})
	if err == nil || !strings.Contains(err.Error(), "open muse transcript") {
		t.Fatalf("err = %v", err)
	}
}

func TestSnapshotModel(t *testing.T) {
	tests := []struct {
		name, json, model, warning string
	}{
		{"top-level snapshot", `{"context_window_usage":{"model_id":"m1"}}`, "m1", ""},
		{"top-level model_id", `{"model_id":"m2"}`, "m2", ""},
		{"entry for the session", `{"other":{"context_window_usage":{"model_id":"x"}},"ses":{"context_window_usage":{"model_id":"m3"}}}`, "m3", ""},
		{"entry for the agent in a sessions array", `{"sessions":[{"agent_id":"other","model_id":"x"},{"agent_id":"ag","model_id":"m4"}]}`, "m4", ""},
		{"only entry", `{"sessions":{"zzz":{"context_window_usage":{"model_id":"m5"}}}}`, "m5", ""},
		{"ambiguous entries", `{"a":{"model_id":"x"},"b":{"model_id":"y"}}`, "", ""},
		{"no model", `{"context_window_usage":{"used_tokens":3}}`, "", ""},
		{"null", `null`, "", "sessions.json: not a JSON object; ignored"},
		{"array", `[]`, "", "sessions.json: not a JSON object; ignored"},
		{"string", `"x"`, "", "sessions.json: not a JSON object; ignored"},
		{"malformed", `{"model_id":`, "", "sessions.json: malformed JSON; ignored"},
		{"empty", ``, "", "sessions.json: malformed JSON; ignored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sessions.json")
			os.WriteFile(path, []byte(tt.json), 0o644)
			model, warning := snapshotModel(path, "ses", "ag")
			if model != tt.model || warning != tt.warning {
				t.Fatalf("got (%q, %q), want (%q, %q)", model, warning, tt.model, tt.warning)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	root := t.TempDir()
	tr := parseOne(t, testEnv(t, nil), writeAgent(t, root, "a",
		`{"type":"item","source":"runtime","created_at":"not a time","item":{"type":"message","role":"user","text":"a"}}`,
		`{"type":"item","source":"runtime","created_at":1791795614000,"item":{"type":"message","role":"user","text":"b"}}`,
		`{"type":"item","source":"runtime","created_at":-5,"item":{"type":"message","role":"user","text":"c"}}`))
	if !tr.Items[0].Time.IsZero() || !tr.Items[2].Time.IsZero() {
		t.Fatalf("bad times parsed: %v %v", tr.Items[0].Time, tr.Items[2].Time)
	}
	if want := time.Date(2026, 10, 12, 9, 0, 14, 0, time.UTC); !tr.Items[1].Time.Equal(want) {
		t.Fatalf("ms time = %v", tr.Items[1].Time)
	}
}

func TestCancelled(t *testing.T) {
	root := t.TempDir()
	lines := make([]string, 10000)
	for i := range lines {
		lines[i] = userItem("runtime", "x")
	}
	path := writeAgent(t, root, "big", lines...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Parse(ctx, testEnv(t, nil), path, transcript.ParseOptions{}); err == nil {
		t.Fatal("cancelled parse succeeded")
	}
	if _, err := New().Discover(ctx, testEnv(t, map[string]string{"MUSE_AGENTS_DIR": root})); err == nil {
		t.Fatal("cancelled discover succeeded")
	}
}

// TestConformance parses every testdata transcript: no panic, no error, and
// the summary agrees with the full parse.
func TestConformance(t *testing.T) {
	paths, _ := filepath.Glob("testdata/agents/*/sessions/*.jsonl")
	if len(paths) == 0 {
		t.Fatal("no testdata")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			env := testEnv(t, nil)
			full := parse(t, env, path, transcript.ParseOptions{})
			sum := parse(t, env, path, transcript.ParseOptions{SummaryOnly: true})
			if len(full) != len(sum) {
				t.Fatalf("full %d, summary %d transcripts", len(full), len(sum))
			}
			for i := range full {
				if diff := cmp.Diff(full[i].Session, sum[i].Session); diff != "" {
					t.Fatalf("summary differs (-full +summary):\n%s", diff)
				}
			}
		})
	}
}
