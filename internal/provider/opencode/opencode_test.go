package opencode

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
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

// writeDB creates dir/opencode.db from testdata/opencode.sql in WAL mode and
// returns its path; the connection is closed, so the WAL is checkpointed
// away.
func writeDB(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "opencode.db")
	db := openRW(t, path)
	execSQL(t, db, "testdata/opencode.sql")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func openRW(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

func execSQL(t testing.TB, db *sql.DB, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(b)); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func parse(t testing.TB, path string, opts transcript.ParseOptions) []*transcript.Transcript {
	t.Helper()
	ts, err := New().Parse(t.Context(), transcript.Env{}, path, opts)
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	return ts
}

func byID(ts []*transcript.Transcript) map[string]*transcript.Transcript {
	m := map[string]*transcript.Transcript{}
	for _, t := range ts {
		m[t.ID] = t
	}
	return m
}

func ms(n int64) time.Time { return time.UnixMilli(1796100000000 + n*1000).UTC() }

const (
	rich  = "ses_a000000000001RichSessionXY"
	child = "ses_a000000000002ChildSession0"
	realA = "ses_dd3ef6bbdffe5SLE0xMEI2bxBZ"
	realB = "ses_dd3e5aa39ffeR2sz3p1vMpdv2d"
)

func TestParseDatabaseSessions(t *testing.T) {
	path := writeDB(t, t.TempDir())
	ts := parse(t, path, transcript.ParseOptions{})
	var ids []string
	for _, tr := range ts {
		ids = append(ids, tr.ID)
	}
	// Ordered by time_created.
	if diff := cmp.Diff([]string{realA, realB, rich, child}, ids); diff != "" {
		t.Fatalf("sessions (-want +got):\n%s", diff)
	}
	got := byID(ts)
	want := map[string]transcript.Session{
		realA: {
			Provider: Name, ID: realA, Path: path, CWD: "$SCRATCH/repo-opencode",
			Title: "say hi", FirstPrompt: "say hi", PromptCount: 1, Model: "claude-sonnet-4-6",
			StartedAt: time.UnixMilli(1796035613763).UTC(), EndedAt: time.UnixMilli(1796035681007).UTC(),
			Usage: &transcript.Usage{}, UsageByModel: map[string]transcript.Usage{"claude-sonnet-4-6": {}},
		},
		realB: {
			Provider: Name, ID: realB, Path: path, CWD: "$SCRATCH/repo-opencode",
			Title: "hi", FirstPrompt: "say hi", PromptCount: 2, ToolCallCount: 1, Model: "claude-sonnet-4-6",
			StartedAt: time.UnixMilli(1796036253127).UTC(), EndedAt: time.UnixMilli(1796036267506).UTC(),
			Usage:        &transcript.Usage{Input: 30, Output: 15},
			UsageByModel: map[string]transcript.Usage{"claude-sonnet-4-6": {Input: 30, Output: 15}},
			CostUSD:      0.000315,
		},
		rich: {
			Provider: Name, ID: rich, Path: path, CWD: "/work/app",
			Title: "Refactor the config loader", FirstPrompt: "Refactor loadCfg into a Config type and update the callers.",
			PromptCount: 2, ToolCallCount: 14, Model: "gpt-5", StartedAt: ms(0), EndedAt: ms(300),
			Usage: &transcript.Usage{Input: 3800, Output: 380, CacheRead: 11100, CacheWrite: 300, Reasoning: 20},
			UsageByModel: map[string]transcript.Usage{
				"gpt-5":      {Input: 3500, Output: 370, CacheRead: 11000, CacheWrite: 300, Reasoning: 20},
				"gpt-5-mini": {Input: 300, Output: 10, CacheRead: 100},
			},
			CostUSD:     0.053,
			Compactions: []transcript.CompactionMark{{ID: "prt_003000", Trigger: "auto", Time: ms(30)}},
			Warnings:    []string{"message msg_bad: malformed JSON", "part prt_z_bad: malformed JSON"},
		},
		child: {
			Provider: Name, ID: child, Path: path, CWD: "/work/app", ParentID: rich,
			Title: "Find config callers (@general subagent)", FirstPrompt: "List every caller of loadCfg",
			PromptCount: 1, Model: "claude-haiku-4-5", StartedAt: ms(50), EndedAt: ms(60),
			Usage:        &transcript.Usage{Input: 40, Output: 8, CacheWrite: 12},
			UsageByModel: map[string]transcript.Usage{"claude-haiku-4-5": {Input: 40, Output: 8, CacheWrite: 12}},
			CostUSD:      0.0004,
		},
	}
	for id, w := range want {
		t.Run(id, func(t *testing.T) {
			if diff := cmp.Diff(w, got[id].Session, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDatabaseItems(t *testing.T) {
	got := byID(parse(t, writeDB(t, t.TempDir()), transcript.ParseOptions{}))[rich]
	var kinds []string
	for _, it := range got.Items {
		k := string(it.Kind)
		if it.Tool != "" {
			k += ":" + it.Tool
		}
		kinds = append(kinds, k)
	}
	wantKinds := []string{
		"user_prompt", "thinking", "assistant_text",
		"tool_use:Read", "tool_result:Read", "tool_use:Glob", "tool_result:Glob",
		"tool_use:Grep", "tool_result:Grep", "tool_use:LS", "tool_result:LS",
		"tool_use:Edit", "tool_result:Edit", "tool_use:MultiEdit", "tool_result:MultiEdit",
		"tool_use:Write", "tool_result:Write", "tool_use:Bash", "tool_result:Bash",
		"tool_use:ApplyPatch", "tool_result:ApplyPatch", "tool_use:WebFetch", "tool_result:WebFetch",
		"tool_use:WebSearch", "tool_result:WebSearch", "tool_use:TodoWrite", "tool_result:TodoWrite",
		"tool_use:Task", "tool_result:Task", "tool_use:lsp_diagnostics",
		"compaction", "user_prompt", "assistant_text", // the summary message is not replayed
	}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Fatalf("item kinds (-want +got):\n%s", diff)
	}
	prompt := got.Items[0]
	if len(prompt.Images) != 1 || prompt.Images[0].MIME != "image/png" || prompt.Images[0].Path != "diagram.png" {
		t.Errorf("prompt images = %+v, want the data: image only (file:// is never read)", prompt.Images)
	}
	if d := got.Items[len(got.Items)-2]; !d.Directive || d.Text != "Continue if you have next steps" {
		t.Errorf("synthetic-only user message = %+v, want a directive", d)
	}
	inputs := map[string]string{}
	results := map[string]transcript.Item{}
	for _, it := range got.Items {
		switch it.Kind {
		case transcript.ToolUse:
			inputs[it.RawTool] = string(it.Input)
		case transcript.ToolResult:
			results[it.RawTool] = it
		}
	}
	tests := []struct {
		raw, input, result string
		isErr              bool
	}{
		{"read", `{"file_path":"/work/app/config.go","limit":200,"offset":0}`, "package app\nfunc loadCfg() {}\n", false},
		{"edit", `{"file_path":"/work/app/config.go","new_string":"type Config struct{}\n\nfunc Load() Config { return Config{} }","old_string":"func loadCfg() {}","replace_all":false}`, "Edit applied successfully.", false},
		{"multiedit", `{"edits":[{"file_path":"/work/app/main.go","new_string":"Load()","old_string":"loadCfg()"},{"file_path":"/work/app/main.go","new_string":"conf :=","old_string":"cfg :="}],"file_path":"/work/app/main.go"}`, "2 edits applied.", false},
		{"write", `{"file_path":"/work/app/config_test.go","content":"package app\n"}`, "Error: file is read-only", true},
		{"bash", `{"command":"go build ./...","description":"Build the module"}`, "\n", false},
		{"patch", `{"patch":"*** Begin Patch\n*** Update File: main.go\n@@\n-old\n+new\n*** End Patch"}`, "Success.", false},
		{"task", `{"description":"Find config callers","prompt":"List every caller of loadCfg","subagent_type":"general"}`, "main.go:3 is the only caller", false},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			if !jsonEqual(inputs[tt.raw], tt.input) {
				t.Errorf("input = %s, want %s", inputs[tt.raw], tt.input)
			}
			if r := results[tt.raw]; r.Text != tt.result || r.IsError != tt.isErr {
				t.Errorf("result = %q (error %v), want %q (error %v)", r.Text, r.IsError, tt.result, tt.isErr)
			}
		})
	}
	if _, ok := results["lsp_diagnostics"]; ok {
		t.Error("a running tool has a result")
	}
}

func jsonEqual(got, want string) bool {
	var a, b any
	if json.Unmarshal([]byte(got), &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	return cmp.Equal(a, b)
}

func TestSummaryOnlyMatchesFull(t *testing.T) {
	path := writeDB(t, t.TempDir())
	full := parse(t, path, transcript.ParseOptions{})
	sum := parse(t, path, transcript.ParseOptions{SummaryOnly: true})
	if len(full) != len(sum) {
		t.Fatalf("%d vs %d transcripts", len(full), len(sum))
	}
	for i := range full {
		if len(sum[i].Items) != 0 {
			t.Errorf("%s: summary built %d items", sum[i].ID, len(sum[i].Items))
		}
		if diff := cmp.Diff(full[i].Session, sum[i].Session); diff != "" {
			t.Errorf("%s (-full +summary):\n%s", full[i].ID, diff)
		}
	}
}

// snapshot records what a directory holds: names, sizes and the bytes of
// every file but the -shm index (which a WAL reader legitimately uses).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		v := fmt.Sprint(fi.Mode(), " ", fi.Size())
		if !strings.HasSuffix(e.Name(), "-shm") {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			v += " " + string(b)
		}
		out[e.Name()] = v
	}
	return out
}

func copyInto(t *testing.T, dst string, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The database is read without writing, creating or deleting anything
// beside it, and committed WAL content is seen.
func TestDatabaseReadOnly(t *testing.T) {
	src := t.TempDir()
	path := writeDB(t, src)
	// Reopen and commit one more session that stays in the WAL: the writer
	// is kept open (and autocheckpoint is off) while the files are copied,
	// as with a running OpenCode.
	w := openRW(t, path)
	defer w.Close()
	if _, err := w.Exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_zzzInWal', 'p-app', 'late', '/work/app', 'Only in the WAL', '1.18.33', 1796200000000, 1796200000000);
		INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_w1', 'ses_zzzInWal', 1796200000001, 1796200000001, '{"role":"user","time":{"created":1796200000001}}');
		INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_w1', 'msg_w1', 'ses_zzzInWal', 1796200000001, 1796200000001, '{"type":"text","text":"written after the checkpoint"}');`); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("expected a non-empty WAL: %v", err)
	}
	tests := []struct {
		name  string
		files []string
		inWAL bool
	}{
		{"database, WAL and index", []string{path, path + "-wal", path + "-shm"}, true},
		{"WAL without its index", []string{path, path + "-wal"}, true},
		{"database only", []string{path}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			copyInto(t, dir, tt.files...)
			before := snapshot(t, dir)
			ts := parse(t, filepath.Join(dir, "opencode.db"), transcript.ParseOptions{})
			after := snapshot(t, dir)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("directory changed (-before +after):\n%s", diff)
			}
			late, ok := byID(ts)["ses_zzzInWal"]
			if ok != tt.inWAL {
				t.Fatalf("session committed to the WAL seen = %v, want %v", ok, tt.inWAL)
			}
			if ok && late.FirstPrompt != "written after the checkpoint" {
				t.Errorf("first prompt = %q", late.FirstPrompt)
			}
			if len(ts) < 4 {
				t.Errorf("%d sessions, want the 4 checkpointed ones at least", len(ts))
			}
		})
	}
}

func TestParseDatabaseErrors(t *testing.T) {
	dir := t.TempDir()
	t.Run("missing file", func(t *testing.T) {
		if _, err := New().Parse(t.Context(), transcript.Env{}, filepath.Join(dir, "nope.db"), transcript.ParseOptions{}); err == nil {
			t.Error("no error for a missing file")
		}
	})
	t.Run("corrupt database", func(t *testing.T) {
		p := filepath.Join(dir, "corrupt.db")
		if err := os.WriteFile(p, append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xff}, 200)...), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := New().Parse(t.Context(), transcript.Env{}, p, transcript.ParseOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), "read opencode database") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("database without sessions", func(t *testing.T) {
		p := filepath.Join(dir, "empty.db")
		db := openRW(t, p)
		if _, err := db.Exec("CREATE TABLE other (x)"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if ts := parse(t, p, transcript.ParseOptions{}); len(ts) != 0 {
			t.Errorf("%d transcripts from a database without sessions", len(ts))
		}
	})
	t.Run("older schema without optional columns", func(t *testing.T) {
		p := filepath.Join(dir, "old.db")
		db := openRW(t, p)
		if _, err := db.Exec(`CREATE TABLE session (id text PRIMARY KEY, title text);
			CREATE TABLE message (id text PRIMARY KEY, session_id text, data text);
			CREATE TABLE part (id text PRIMARY KEY, message_id text, data text);
			INSERT INTO session VALUES ('ses_1', 'Old one');
			INSERT INTO message VALUES ('msg_1', 'ses_1', '{"role":"user","time":{"created":1}}');
			INSERT INTO part VALUES ('prt_1', 'msg_1', '{"type":"text","text":"hello"}');`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		ts := parse(t, p, transcript.ParseOptions{})
		if len(ts) != 1 || ts[0].Title != "Old one" || ts[0].FirstPrompt != "hello" {
			t.Errorf("got %+v", ts)
		}
	})
}

func TestParseLegacyTree(t *testing.T) {
	root := "testdata/data/opencode/storage/session/p1/"
	l1 := parse(t, root+"ses_L1.json", transcript.ParseOptions{})
	l2 := parse(t, root+"ses_L2.json", transcript.ParseOptions{})
	want1 := transcript.Session{
		Provider: Name, ID: "ses_L1", Path: root + "ses_L1.json", CWD: "/work/legacy",
		Title: "Port the build script", FirstPrompt: "Port build.sh to a Makefile", PromptCount: 1, ToolCallCount: 1,
		Model: "claude-sonnet-4", StartedAt: time.UnixMilli(1750000000000).UTC(), EndedAt: time.UnixMilli(1750000060000).UTC(),
		Usage:        &transcript.Usage{Input: 100, Output: 20, CacheWrite: 50},
		UsageByModel: map[string]transcript.Usage{"claude-sonnet-4": {Input: 100, Output: 20, CacheWrite: 50}},
		CostUSD:      0.01,
		Warnings:     []string{"prt_L1b3.json: malformed JSON"},
	}
	if diff := cmp.Diff(want1, l1[0].Session); diff != "" {
		t.Errorf("ses_L1 (-want +got):\n%s", diff)
	}
	if n := len(l1[0].Items); n != 4 {
		t.Errorf("ses_L1 has %d items, want prompt, tool use, result, text", n)
	}
	if l2[0].Title != "What does the Makefile do?" || l2[0].CWD != "/work/legacy" {
		t.Errorf("ses_L2: title %q (placeholder must give way), cwd %q (from the project file)", l2[0].Title, l2[0].CWD)
	}
}

func TestParseJSONShapes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, content, warning string
		prompts                int
	}{
		{"not json", "hello", "not a JSON object", 0},
		{"array", "[1,2]", "not a JSON object", 0},
		{"unrelated object", `{"foo":1}`, "neither an OpenCode session nor an export", 0},
		{"export with a broken message", `{"info":{"id":"ses_x","title":"T"},"messages":[1,{"info":{"role":"user","id":"m"},"parts":[{"type":"text","text":"q"},7]}]}`, "message 1: no info object", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := parse(t, write(strings.ReplaceAll(tt.name, " ", "_")+".json", tt.content), transcript.ParseOptions{})
			if len(ts) != 1 || ts[0].PromptCount != tt.prompts || len(ts[0].Warnings) != 1 || !strings.Contains(ts[0].Warnings[0], tt.warning) {
				t.Errorf("got %+v", ts[0].Session)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "opencode")
	if err := os.CopyFS(dir, os.DirFS("testdata/data/opencode")); err != nil {
		t.Fatal(err)
	}
	db := writeDB(t, dir)
	w := openRW(t, db) // leave a WAL behind, as a running OpenCode does
	defer w.Close()
	if _, err := w.Exec(`UPDATE session SET title = 'renamed' WHERE id = 'ses_a000000000001RichSessionXY'`); err != nil {
		t.Fatal(err)
	}
	dbInfo, _ := os.Stat(db)
	walInfo, err := os.Stat(db + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	env := transcript.Env{Home: t.TempDir(), Getenv: func(k string) string {
		if k == "XDG_DATA_HOME" {
			return data
		}
		return ""
	}}
	files, err := New().Discover(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
		if f.Path == db && f.Size != dbInfo.Size()+walInfo.Size() {
			t.Errorf("database size %d, want database + WAL %d", f.Size, dbInfo.Size()+walInfo.Size())
		}
	}
	slices.Sort(paths)
	want := []string{db, filepath.Join(dir, "storage/session/p1/ses_L1.json"), filepath.Join(dir, "storage/session/p1/ses_L2.json")}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{dir, filepath.Join(dir, "storage", "session")}, New().Roots(env)); diff != "" {
		t.Errorf("roots (-want +got):\n%s", diff)
	}
	t.Run("default data dir", func(t *testing.T) {
		home := t.TempDir()
		if got := New().Roots(transcript.Env{Home: home}); got[0] != filepath.Join(home, ".local/share/opencode") {
			t.Errorf("roots = %q", got)
		}
		if files, err := New().Discover(t.Context(), transcript.Env{Home: home}); err != nil || len(files) != 0 {
			t.Errorf("missing root: %v, %v", files, err)
		}
	})
}
