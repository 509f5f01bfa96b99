package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/blob"
	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/stats"
	"github.com/musterhq/muster/internal/transcript"
)

// claudeLines writes a Claude Code transcript (the shape of
// ~/.claude/projects/<cwd>/<id>.jsonl) with prompts prompts; each prompt
// gets one tool call (Edit, or a failing Bash when failBash) and a reply.
func claudeLines(id, cwd string, t0 time.Time, prompts int, failBash bool) string {
	var b strings.Builder
	n := 0
	line := func(v map[string]any) {
		n++
		v["sessionId"], v["cwd"], v["uuid"] = id, cwd, fmt.Sprintf("%s-u%d", id[:8], n)
		v["timestamp"] = t0.Add(time.Duration(n) * time.Second).Format(time.RFC3339)
		data, _ := json.Marshal(v)
		b.Write(data)
		b.WriteByte('\n')
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 50, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 1000}
	for p := range prompts {
		line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": fmt.Sprintf("prompt %d of %s", p+1, id[:8])}})
		tool := map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%s_%d", id[:8], p), "name": "Edit",
			"input": map[string]any{"file_path": cwd + "/main.go", "old_string": "a\nb", "new_string": "a\nc\nd"}}
		if failBash {
			tool["name"], tool["input"] = "Bash", map[string]any{"command": "go test ./..."}
		}
		line(map[string]any{"type": "assistant", "requestId": fmt.Sprintf("req_%s_%d", id[:8], p), "message": map[string]any{
			"id": fmt.Sprintf("msg_%s_%d", id[:8], p), "role": "assistant", "model": "claude-sonnet-4-20250514",
			"content": []any{tool}, "usage": usage}})
		line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{
			"type": "tool_result", "tool_use_id": fmt.Sprintf("toolu_%s_%d", id[:8], p), "content": "done", "is_error": failBash}}}})
		line(map[string]any{"type": "assistant", "requestId": fmt.Sprintf("req2_%s_%d", id[:8], p), "message": map[string]any{
			"id": fmt.Sprintf("msg2_%s_%d", id[:8], p), "role": "assistant", "model": "claude-sonnet-4-20250514",
			"content": []any{map[string]any{"type": "text", "text": "ok"}}, "usage": map[string]any{"input_tokens": 5, "output_tokens": 5}}})
	}
	return b.String()
}

type cliEnv struct {
	t      *testing.T
	home   string
	muster string
	dir    string
	now    func() time.Time // nil: the real clock
	path   string           // PATH, empty by default
}

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	root := t.TempDir()
	e := &cliEnv{t: t, home: filepath.Join(root, "home"), muster: filepath.Join(root, "m")}
	e.dir = filepath.Join(e.home, ".claude", "projects")
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	write := func(proj, id string, prompts int, fail bool, at time.Time) {
		p := filepath.Join(e.dir, proj, id+".jsonl")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(claudeLines(id, "/src/"+proj, at, prompts, fail)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("-src-app", "aaaaaaaa-0000-4000-8000-000000000001", 2, false, t0)
	write("-src-app", "aaaabbbb-0000-4000-8000-000000000002", 1, true, t0.Add(time.Hour))
	write("-src-web", "cccccccc-0000-4000-8000-000000000003", 1, false, t0.Add(48*time.Hour))
	t.Chdir(root)
	return e
}

func (e *cliEnv) run(args ...string) (code int, stdout, stderr string) {
	ios, _, out, errOut := iostreams.Test()
	env := map[string]string{"HOME": e.home, "MUSTER_HOME": e.muster, "CLAUDE_CONFIG_DIR": filepath.Join(e.home, ".claude"),
		"CODEX_HOME": filepath.Join(e.home, ".codex"), "GEMINI_CLI_HOME": e.home, "XDG_CONFIG_HOME": filepath.Join(e.home, ".config"),
		"XDG_DATA_HOME": filepath.Join(e.home, ".local", "share"), "MUSE_AGENTS_DIR": filepath.Join(e.home, "agents"), "PATH": e.path}
	f := &Factory{IO: ios, Now: e.now, Getenv: func(k string) string { return env[k] }}
	code = Run(e.t.Context(), f, args)
	return code, out.String(), errOut.String()
}

func TestHistoryCommand(t *testing.T) {
	e := newCLIEnv(t)
	code, out, errOut := e.run("history", "--json", "--provider", "claude")
	if code != 0 {
		t.Fatalf("history: %d %s", code, errOut)
	}
	var list []historyEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, s := range list {
		refs = append(refs, s.Ref)
	}
	want := "claude:cccccccc-0000-4000-8000-000000000003 claude:aaaabbbb-0000-4000-8000-000000000002 claude:aaaaaaaa-0000-4000-8000-000000000001"
	if strings.Join(refs, " ") != want {
		t.Fatalf("refs = %v", refs)
	}
	if list[2].PromptCount != 2 || list[2].Title == "" || list[2].CWD != "/src/-src-app" {
		t.Errorf("summary = %+v", list[2].Session)
	}

	_, out, _ = e.run("history", "--search", "PROMPT 1 OF CCCC")
	if !strings.Contains(out, "claude:cccccccc ") || strings.Contains(out, "aaaa") {
		t.Errorf("search:\n%s", out)
	}
	_, out, _ = e.run("history", "--json", "--since", "2026-03-02", "--provider", "claude")
	if !strings.Contains(out, "cccccccc") || strings.Contains(out, "aaaaaaaa") {
		t.Errorf("since:\n%s", out)
	}
	_, out, errOut = e.run("history", "--limit", "1")
	if strings.Count(out, "claude:") != 1 || !strings.Contains(errOut, "2 more") {
		t.Errorf("limit:\n%s\n%s", out, errOut)
	}
}

func TestHistoryFlagErrors(t *testing.T) {
	e := newCLIEnv(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"history", "--provider", "nope"}, `unknown provider "nope"`},
		{[]string{"history", "--limit", "-1"}, "--limit"},
		{[]string{"history", "--since", "yesterday"}, "neither a duration"},
		{[]string{"history", "extra"}, "unknown command"},
		{[]string{"stats", "--by", "fortnight"}, `--by "fortnight"`},
		{[]string{"stats", "--until", "soon"}, "--until"},
		{[]string{"stats", "--since", "2026-03-02", "--until", "2026-03-01"}, "not after --since"},
		{[]string{"stats", "--prices", "--by", "day"}, "--prices takes no --by"},
		{[]string{"show"}, "accepts 1 arg"},
		{[]string{"show", "gemeni:abc"}, `unknown provider "gemeni"`},
		{[]string{"serve", "--addr", "0.0.0.0:7777"}, "not a loopback address"},
		{[]string{"serve", "--addr", "nonsense"}, "want HOST:PORT"},
		{[]string{"serve", "--port", "0"}, "--port 0: want 1–65535"},
		{[]string{"serve", "--port", "70000"}, "--port 70000: want 1–65535"},
		{[]string{"serve", "--addr", "127.0.0.1:8080", "--port", "9090"}, "name two ports: give one"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := e.run(tt.args...)
			if code != ExitUsage || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tt.want)
			}
			if first, _, _ := strings.Cut(errOut, "\n"); !strings.HasPrefix(first, "muster: ") {
				t.Errorf("stderr does not start with a one-line error: %q", errOut)
			}
		})
	}
}

// serve listens on a random port unless --port (or a port in --addr)
// names one: a fixed port lets any web page reach it.
func TestServePort(t *testing.T) {
	for _, tt := range []struct {
		args []string
		addr string
	}{
		{nil, "127.0.0.1:0"},
		{[]string{"--port", "8123"}, "127.0.0.1:8123"},
		{[]string{"--addr", "localhost:0", "--port", "8123"}, "localhost:8123"},
		{[]string{"--addr", "127.0.0.1:8123", "--port", "8123"}, "127.0.0.1:8123"},
		{[]string{"--addr", "127.0.0.1:8124"}, "127.0.0.1:8124"},
	} {
		var got *serveOptions
		ios, _, _, _ := iostreams.Test()
		cmd := newServeCmdWith(&Factory{IO: ios}, func(o *serveOptions) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil || got == nil || got.Addr != tt.addr {
			t.Errorf("serve %v: %v %+v, want address %s", tt.args, err, got, tt.addr)
		}
	}
}

func TestServePublicFlag(t *testing.T) {
	var got *serveOptions
	ios, _, _, _ := iostreams.Test()
	cmd := newServeCmdWith(&Factory{IO: ios}, func(o *serveOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--addr", "0.0.0.0:8080", "--public"})
	if err := cmd.Execute(); err != nil || got == nil || got.Addr != "0.0.0.0:8080" || !got.Public {
		t.Fatalf("--public: %v %+v", err, got)
	}
}

func TestShowCommand(t *testing.T) {
	e := newCLIEnv(t)
	tests := []struct {
		name string
		ref  string
		code int
		want []string
	}{
		{"prefix", "cccc", 0, []string{"prompt 1 of cccccccc", "[Edit] /src/-src-web/main.go (+2 −1)", "claude:cccccccc-0000-4000-8000-000000000003"}},
		{"provider id", "claude:aaaabbbb-0000-4000-8000-000000000002", 0, []string{"[Bash] $ go test ./...", "[error]"}},
		{"path", filepath.Join(e.dir, "-src-app", "aaaaaaaa-0000-4000-8000-000000000001.jsonl"), 0, []string{"prompt 2 of aaaaaaaa"}},
		{"ambiguous", "aaaa", 1, []string{`session "aaaa" is ambiguous: claude:aaaabbbb-0000-4000-8000-000000000002, claude:aaaaaaaa-0000-4000-8000-000000000001`}},
		{"unknown", "ffff", 1, []string{`session "ffff": no such session`, "muster history"}},
		{"missing file", "./nope.jsonl", 1, []string{"no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := e.run("show", tt.ref)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("missing %q in\n%s%s", w, out, errOut)
				}
			}
		})
	}
}

func TestStatsCommand(t *testing.T) {
	e := newCLIEnv(t)
	code, out, errOut := e.run("stats", "--json", "--provider", "claude")
	if code != 0 {
		t.Fatalf("stats: %d %s", code, errOut)
	}
	var r stats.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	tot := r.Total
	// 4 prompts, each with 1160 + 10 tokens; 3 edits of +2 −1 to two files.
	if tot.Sessions != 3 || tot.Prompts != 4 || tot.ToolCalls != 4 || tot.Tools["Edit"] != 3 || tot.Tools["Bash"] != 1 ||
		tot.ToolErrors != 1 || tot.FilesEdited != 2 || tot.LinesAdded != 6 || tot.LinesRemoved != 3 ||
		tot.Tokens.Total != 4*1170 || tot.Tokens.CacheRead != 4000 {
		t.Errorf("total = %+v", tot)
	}
	perPrompt, _ := stats.Cost("claude-sonnet-4-20250514", statsUsage(105, 55, 1000, 10))
	if d := tot.CostUSD - 4*perPrompt; d > 1e-9 || d < -1e-9 {
		t.Errorf("cost = %v, want %v", tot.CostUSD, 4*perPrompt)
	}
	if r.PriceTable.AsOf != stats.PricesAsOf || r.PriceTable.Source == "" {
		t.Errorf("price table %+v", r.PriceTable)
	}
	_, out, _ = e.run("stats", "--by", "day")
	if !strings.Contains(out, "2026-03-01") || !strings.Contains(out, "2026-03-03") {
		t.Errorf("by day:\n%s", out)
	}
	// The price table, with its date: the sonnet price used above.
	code, out, errOut = e.run("stats", "--prices", "--json")
	var table struct {
		AsOf   string                 `json:"as_of"`
		Models map[string]stats.Price `json:"models"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &table) != nil || table.AsOf != stats.PricesAsOf || table.Models["claude-sonnet-4"].Output != 15 {
		t.Errorf("stats --prices --json: %d %s %s", code, out, errOut)
	}
	if _, out, _ = e.run("stats", "--prices"); !strings.Contains(out, "prices as of "+stats.PricesAsOf) || !strings.Contains(out, "claude-sonnet-4 ") {
		t.Errorf("stats --prices:\n%s", out)
	}
}

// TestStatsSeesChangedTranscripts: stats lists sessions while the refresh
// runs; when the refresh writes (a transcript grew, one appeared, one
// vanished), the report is of what it wrote.
func TestStatsSeesChangedTranscripts(t *testing.T) {
	e := newCLIEnv(t)
	total := func() stats.Group {
		t.Helper()
		code, out, errOut := e.run("stats", "--json", "--provider", "claude")
		var r stats.Report
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("stats: %d %s %s", code, out, errOut)
		}
		return r.Total
	}
	if tot := total(); tot.Sessions != 3 || tot.Prompts != 4 {
		t.Fatalf("first run: %+v", tot)
	}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	grown := filepath.Join(e.dir, "-src-app", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	if err := os.WriteFile(grown, []byte(claudeLines("aaaaaaaa-0000-4000-8000-000000000001", "/src/app", t0, 5, false)), 0o644); err != nil {
		t.Fatal(err)
	}
	if tot := total(); tot.Sessions != 3 || tot.Prompts != 7 {
		t.Errorf("after a transcript grew: %+v", tot)
	}
	if err := os.Remove(filepath.Join(e.dir, "-src-web", "cccccccc-0000-4000-8000-000000000003.jsonl")); err != nil {
		t.Fatal(err)
	}
	if tot := total(); tot.Sessions != 2 || tot.Prompts != 6 {
		t.Errorf("after a transcript vanished: %+v", tot)
	}
	if tot := total(); tot.Sessions != 2 || tot.Prompts != 6 {
		t.Errorf("warm: %+v", tot)
	}
}

func TestReplayCommand(t *testing.T) {
	e := newCLIEnv(t)
	code, _, errOut := e.run("replay", "cccc", "-o", "r.html")
	if code != 0 {
		t.Fatalf("replay: %d %s", code, errOut)
	}
	page, err := os.ReadFile("r.html")
	if err != nil || !bytes.Contains(page, []byte("prompt 1 of cccccccc")) || !bytes.Contains(page, []byte("Content-Security-Policy")) {
		t.Fatalf("r.html: %v %.200s", err, page)
	}
	code, out, errOut := e.run("replay", "cccc", "--publish")
	if code != 0 {
		t.Fatalf("publish: %d %s", code, errOut)
	}
	id := blob.ID(page)
	if out != id+"\n/api/v1/blob/"+id+"\n" || !strings.Contains(errOut, "no `muster serve` runs") {
		t.Errorf("publish printed %q %q, want the id of the -o page %s and its path", out, errOut, id)
	}
	// With a serve running, the full URL.
	dirs := paths.Dirs{Runtime: filepath.Join(e.muster, "run")}
	done := recordServe(dirs, "127.0.0.1:43210")
	code, out, _ = e.run("replay", "cccc", "--publish")
	done()
	if code != 0 || out != id+"\nhttp://127.0.0.1:43210/api/v1/blob/"+id+"\n" {
		t.Errorf("publish with a serve running printed %q", out)
	}
	stored, err := blob.New(filepath.Join(e.muster, "state", "blobs")).Get(id)
	if err != nil || !bytes.Equal(stored.Content, page) {
		t.Errorf("stored blob: %v", err)
	}
	if code, _, errOut := e.run("replay", "cccc", "-o", t.TempDir()); code != ExitUsage || !strings.Contains(errOut, "is a directory") {
		t.Errorf("-o DIR: %d %s", code, errOut)
	}
	code, out, _ = e.run("replay", "cccc", "-o", "-", "--no-redact")
	if code != 0 || !strings.Contains(out, "Not redacted") {
		t.Errorf("-o - --no-redact: %d", code)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"", time.Time{}, false},
		{"7d", now.Add(-7 * 24 * time.Hour), false},
		{"1.5d", now.Add(-36 * time.Hour), false},
		{"2w", now.Add(-14 * 24 * time.Hour), false},
		{"24h", now.Add(-24 * time.Hour), false},
		{"1h30m", now.Add(-90 * time.Minute), false},
		{"2026-03-01", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), false},
		{"2026-03-01T05:00:00Z", time.Date(2026, 3, 1, 5, 0, 0, 0, time.UTC), false},
		{"-1h", time.Time{}, true},
		{"-7d", time.Time{}, true},
		{"7x", time.Time{}, true},
		{"d", time.Time{}, true},
		{"yesterday", time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSince(tt.in, now)
			if (err != nil) != tt.err || !got.Equal(tt.want) {
				t.Errorf("parseSince(%q) = %v, %v", tt.in, got, err)
			}
		})
	}
}

func statsUsage(in, out, cacheRead, cacheWrite int64) transcript.Usage {
	return transcript.Usage{Input: in, Output: out, CacheRead: cacheRead, CacheWrite: cacheWrite}
}

func TestProgress(t *testing.T) {
	for _, tty := range []bool{false, true} {
		ios, _, _, errOut := iostreams.Test()
		ios.SetStderrTTY(tty)
		p := newProgress(ios, "indexing transcripts")
		for i := 1; i <= 100; i++ {
			p.update(i, 100)
		}
		p.done()
		got := errOut.String()
		if tty && (!strings.Contains(got, "indexing transcripts 100/100") || !strings.HasSuffix(got, "\r\x1b[K")) {
			t.Errorf("terminal progress = %q", got)
		}
		if !tty && got != "" {
			t.Errorf("progress written to a pipe: %q", got)
		}
	}
}

// TestJSONFields lists the keys of the --json outputs: keys may be added,
// never renamed or removed.
func TestHistorySearch(t *testing.T) {
	e := newCLIEnv(t)
	key := "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefgh"
	// A session whose title holds a key, and whose tool output holds a word
	// said nowhere else.
	lines := claudeLines("dddddddd-0000-4000-8000-000000000004", "/src/secret", time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC), 1, false)
	lines = strings.Replace(lines, "prompt 1 of dddddddd", "deploy with "+key, 1)
	lines = strings.Replace(lines, `"content":"done"`, `"content":"frobnicated the quuxlet"`, 1)
	p := filepath.Join(e.dir, "-src-secret", "dddddddd-0000-4000-8000-000000000004.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := e.run("history")
	if code != 0 || strings.Contains(out, "AbCdEf") || !strings.Contains(out, "[REDACTED") {
		t.Errorf("history shows the key (%d %s):\n%s", code, errOut, out)
	}
	// Ids share 4 characters at most: 8 are shown, and the directory.
	if !strings.Contains(out, "claude:aaaaaaaa ") || !strings.Contains(out, "claude:aaaabbbb ") || !strings.Contains(out, "/src/-src-app") {
		t.Errorf("ids or directories:\n%s", out)
	}

	_, out, _ = e.run("history", "--search", "quuxlet")
	if !strings.Contains(out, "claude:dddddddd") || strings.Contains(out, "aaaa") || !strings.Contains(out, "frobnicated the quuxlet") || strings.Contains(out, "\x1b[") {
		t.Errorf("search a tool output:\n%s", out)
	}
	code, out, _ = e.run("history", "--search", "quuxlet", "--json")
	var list []historyEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 || len(list) != 1 {
		t.Fatalf("search --json (%d, %v):\n%s", code, err, out)
	}
	h := list[0]
	if h.ID != "dddddddd-0000-4000-8000-000000000004" || len(h.Highlights) != 1 || h.Snippet[h.Highlights[0][0]:h.Highlights[0][1]] != "quuxlet" || h.Tier == nil || *h.Tier != 2 {
		t.Errorf("search --json entry: %+v", h)
	}
	_, out, _ = e.run("history", "--search", "deploy", "--json")
	if strings.Contains(out, "AbCdEf") || !strings.Contains(out, "dddddddd") {
		t.Errorf("search --json shows the key:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
		not  string
	}{
		{[]string{"--search", "prompt", "--dir", "/src/-src-web"}, "cccccccc", "aaaa"},
		{[]string{"--dir", "/src/-src-app"}, "aaaabbbb", "cccc"},
		{[]string{"--search", "prompt", "--until", "2026-03-01"}, "aaaaaaaa", "cccc"},
		{[]string{"--search", `"NEAR(-*`}, "No sessions found.", "claude:"},
	} {
		code, out, errOut := e.run(append([]string{"history"}, c.args...)...)
		if code != 0 || !strings.Contains(out, c.want) || strings.Contains(out, c.not) {
			t.Errorf("history %v (%d %s):\n%s", c.args, code, errOut, out)
		}
	}
}

func TestHighlight(t *testing.T) {
	h := history.Hit{Snippet: "the \x1b[31mred quuxlet", Highlights: [][2]int{{13, 20}}}
	if got := highlight(h, true); got != "the red \x1b[1;7mquuxlet\x1b[22;27m" {
		t.Errorf("tty: %q", got)
	}
	if got := highlight(h, false); got != "the red quuxlet" {
		t.Errorf("not a tty: %q", got)
	}
}

func TestUniquePrefix(t *testing.T) {
	ids := []string{"0198a1b2-aaaa", "0198a1b2-aaab", "0198ffff", "abc", "dup", "dup"}
	for id, want := range map[string]string{"0198a1b2-aaaa": "0198a1b2-aaaa", "0198ffff": "0198ffff", "abc": "abc", "dup": "dup",
		"12345678901234": "12345678"} {
		if got := uniquePrefix(id, ids); got != want {
			t.Errorf("uniquePrefix(%q) = %q, want %q", id, got, want)
		}
	}
	if got := uniquePrefix("0198a1b2-aaab", append(ids[:1:1], "0198a1b2-aaab", "0198a1b3")); got != "0198a1b2-aaab" {
		t.Errorf("got %q", got)
	}
	if got := uniquePrefix("0198a1b3ffff", []string{"0198a1b2", "0198a1b3ffff"}); got != "0198a1b3" {
		t.Errorf("got %q", got)
	}
}

func TestJSONFields(t *testing.T) {
	e := newCLIEnv(t)
	keys := func(raw json.RawMessage) []string {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	_, out, _ := e.run("history", "--json", "--provider", "claude", "--search", "aaaaaaaa")
	var list []json.RawMessage
	json.Unmarshal([]byte(out), &list)
	if len(list) != 1 {
		t.Fatalf("history --json: %s", out)
	}
	for _, k := range []string{"ref", "provider", "id", "path", "cwd", "title", "first_prompt", "prompt_count", "tool_call_count", "model", "started_at", "ended_at", "usage"} {
		if !slices.Contains(keys(list[0]), k) {
			t.Errorf("history --json lacks %q (has %v)", k, keys(list[0]))
		}
	}
	_, out, _ = e.run("stats", "--json", "--by", "provider")
	var r map[string]json.RawMessage
	json.Unmarshal([]byte(out), &r)
	if got := keys([]byte(out)); !slices.Equal(got, []string{"by", "files", "groups", "price_table", "total"}) {
		t.Errorf("stats --json keys = %v", got)
	}
	want := []string{"cost_usd", "duration_ms", "files_edited", "lines_added", "lines_removed", "models", "prompts", "sessions", "tokens", "tool_calls", "tool_errors", "tools"}
	if got := keys(r["total"]); !slices.Equal(got, want) {
		t.Errorf("stats --json total keys = %v, want %v", got, want)
	}
	if got := keys(json.RawMessage(strings.TrimSpace(string(mustIndex(t, r["total"], "tokens"))))); !slices.Equal(got, []string{"cache_read", "cache_write", "input", "output", "reasoning", "total"}) {
		t.Errorf("tokens keys = %v", got)
	}
}

func mustIndex(t *testing.T, raw json.RawMessage, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m[key]
}

// TestShowRedactsTitle: the title line of `muster show` is redacted as the
// history list redacts it.
func TestShowRedactsTitle(t *testing.T) {
	var b strings.Builder
	printTranscript(&b, &transcript.Transcript{Session: transcript.Session{Provider: "claude", ID: "x", Title: "deploy with sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"}})
	first, _, _ := strings.Cut(b.String(), "\n")
	if first != "deploy with [REDACTED:anthropic-key]" {
		t.Errorf("title line = %q", first)
	}
}

// TestHistoryIndexOwnFile: `muster history` keeps its index in history.db,
// the file the daemon's watcher keeps fresh, not in muster.db, whose one
// writer commits agent events; a corrupt index is moved aside with a
// notice and rebuilt from the transcripts.
func TestHistoryIndexOwnFile(t *testing.T) {
	e := newCLIEnv(t)
	if code, _, errOut := e.run("history", "--provider", "claude"); code != 0 {
		t.Fatalf("history: %d %s", code, errOut)
	}
	state := filepath.Join(e.muster, "state")
	idx, err := history.OpenReadOnly(t.Context(), filepath.Join(state, "history.db"), Version)
	if err != nil {
		t.Fatal(err)
	}
	got, err := idx.List(t.Context(), history.Query{})
	idx.Close()
	if err != nil || len(got) != 3 {
		t.Fatalf("history.db lists %d sessions (%v), want 3", len(got), err)
	}
	if _, err := os.Stat(filepath.Join(state, "muster.db")); err == nil {
		t.Error("history created muster.db")
	}

	if err := os.WriteFile(filepath.Join(state, "history.db"), []byte("garbage, not a database, and long enough to be read as a header at all, or nearly so: padding padding"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run("history", "--provider", "claude")
	if code != 0 || !strings.Contains(errOut, "history index was corrupt") || strings.Count(out, "claude:") != 3 {
		t.Fatalf("history over a corrupt index: exit %d\n%s%s", code, out, errOut)
	}
}
