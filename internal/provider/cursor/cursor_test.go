package cursor

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	cliID    = "0b4c1f9e-2d3a-4e5f-8a9b-1c2d3e4f5a6b"
	ideID    = "7e8f9a0b-1c2d-4e3f-9a5b-6c7d8e9f0a1b"
	legacyID = "5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f"
	storeID  = "93d7b323-695c-4b84-8b69-d48bb88ae780"
)

// sanitize is Cursor's project directory naming: no leading "/", every
// other non-alphanumeric byte becomes "-".
func sanitize(p string) string {
	b := []byte(strings.TrimPrefix(p, "/"))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

type fakeHome struct {
	home, cursor, ws, project, chats string
}

// newHome lays out a Cursor home for a workspace whose sanitized name is
// ambiguous: <tmp>/work/my-app.v2 and <tmp>/work/my-app/v2 both exist.
func newHome(t *testing.T) fakeHome {
	t.Helper()
	root := t.TempDir()
	h := fakeHome{home: filepath.Join(root, "home"), ws: filepath.Join(root, "work", "my-app.v2")}
	h.cursor = filepath.Join(h.home, ".cursor")
	h.project = filepath.Join(h.cursor, "projects", sanitize(h.ws), "agent-transcripts")
	h.chats = filepath.Join(h.cursor, "chats", md5hex(h.ws))
	for _, d := range []string{h.ws, filepath.Join(root, "work", "my-app", "v2"), h.project, filepath.Join(h.project, ideID), filepath.Join(h.chats, ideID)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, "testdata/transcript.jsonl", filepath.Join(h.project, cliID+".jsonl"))
	copyFile(t, "testdata/transcript.jsonl", filepath.Join(h.project, ideID, ideID+".jsonl"))
	copyFile(t, "testdata/legacy.txt", filepath.Join(h.project, legacyID+".txt"))
	writeStore(t, filepath.Join(h.chats, cliID, "store.db"), map[string]any{
		"agentId": cliID, "name": "Health endpoint", "mode": "auto-run", "createdAt": 1796030000000, "lastUsedModel": "gpt-5",
	}, nil)
	var fixture struct {
		Meta     map[string]any    `json:"meta"`
		Messages []json.RawMessage `json:"messages"`
	}
	b, err := os.ReadFile("testdata/store.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fixture); err != nil {
		t.Fatal(err)
	}
	writeStore(t, filepath.Join(h.chats, storeID, "store.db"), fixture.Meta, fixture.Messages)
	return h
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeStore builds a store.db: meta "0" as hex JSON, and each message in a
// blob wrapped in protobuf-like binary, plus a blob with no JSON and a
// second copy of the first message (content addressing keeps both).
func writeStore(t *testing.T, path string, meta map[string]any, msgs []json.RawMessage) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	m, _ := json.Marshal(meta)
	if _, err := db.Exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB);
		INSERT INTO meta VALUES ('0', ?)`, hex.EncodeToString(m)); err != nil {
		t.Fatal(err)
	}
	put := func(data []byte) {
		sum := sha256.Sum256(data)
		if _, err := db.Exec("INSERT INTO blobs VALUES (?, ?)", hex.EncodeToString(sum[:]), data); err != nil {
			t.Fatal(err)
		}
	}
	for i, msg := range msgs {
		wrapped := append([]byte{0x0a, byte(len(msg) & 0x7f), 0x01, '{', 0x00}, msg...)
		wrapped = append(wrapped, 0x12, 0x20)
		wrapped = append(wrapped, sha256.New().Sum([]byte{byte(i)})...)
		if i == 2 {
			wrapped = msg // some blobs are plain JSON
		}
		put(wrapped)
	}
	if len(msgs) > 0 {
		put([]byte{0x0a, 0x20, 0xde, 0xad, '{', '"', 0xbe, 0xef})
		put(append(append([]byte{0x1a, 0x05}, msgs[0]...), 0x22, 0x00))
	}
}

func parse(t *testing.T, path string, opts transcript.ParseOptions) *transcript.Transcript {
	t.Helper()
	ts, err := New().Parse(t.Context(), transcript.Env{}, path, opts)
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	if len(ts) != 1 {
		t.Fatalf("Parse(%s) gave %d transcripts", path, len(ts))
	}
	return ts[0]
}

func kinds(items []transcript.Item) []string {
	var out []string
	for _, it := range items {
		k := string(it.Kind)
		if it.Tool != "" {
			k += ":" + it.Tool
		}
		out = append(out, k)
	}
	return out
}

func TestParseJSONL(t *testing.T) {
	h := newHome(t)
	path := filepath.Join(h.project, cliID+".jsonl")
	got := parse(t, path, transcript.ParseOptions{})
	fi, _ := os.Stat(path)
	want := transcript.Session{
		Provider: Name, ID: cliID, Path: path, CWD: h.ws,
		Title: "Health endpoint", FirstPrompt: "Add a /healthz endpoint to the server",
		PromptCount: 3, ToolCallCount: 11, Model: "gpt-5",
		StartedAt: time.UnixMilli(1796030000000).UTC(), EndedAt: fi.ModTime().UTC(),
		Warnings: []string{"line 4: malformed JSON", "line 5: not a JSON object"},
	}
	if diff := cmp.Diff(want, got.Session); diff != "" {
		t.Errorf("session (-want +got):\n%s", diff)
	}
	wantKinds := []string{
		"user_prompt", "thinking", "assistant_text", "tool_use:Read",
		"tool_use:Edit", "tool_use:Write", "tool_use:Bash", "tool_use:Grep", "tool_use:Glob", "tool_use:LS",
		"tool_use:WebSearch", "tool_use:TodoWrite", "tool_use:Task", "tool_use:Delete", "assistant_text",
		"user_prompt", "user_prompt", "assistant_text",
	}
	if diff := cmp.Diff(wantKinds, kinds(got.Items)); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	inputs := map[string]string{}
	for _, it := range got.Items {
		if it.Kind == transcript.ToolUse {
			inputs[it.RawTool] = string(it.Input)
			if it.CallID == "" {
				t.Errorf("%s has no call id", it.RawTool)
			}
		}
	}
	wantInputs := map[string]string{
		"Read":       `{"file_path":"/srv/app/server.go","limit":200,"offset":1}`,
		"StrReplace": `{"file_path":"/srv/app/server.go","new_string":"mux := http.NewServeMux()\n\tmux.HandleFunc(\"/healthz\", healthz)","old_string":"mux := http.NewServeMux()"}`,
		"Write":      `{"content":"package app\n\nfunc healthz(w http.ResponseWriter, r *http.Request) {}\n","file_path":"/srv/app/health.go"}`,
		"Shell":      `{"command":"go test ./...","description":"Run the tests","working_directory":"/srv/app"}`,
		"Grep":       `{"pattern":"healthz","path":"/srv/app","glob":"*.go"}`,
		"Glob":       `{"path":"/srv/app","pattern":"**/*_test.go"}`,
		"LS":         `{"path":"/srv/app"}`,
		"WebSearch":  `{"query":"kubernetes liveness probe path"}`,
		"Delete":     `{"path":"/srv/app/old_health.go"}`,
	}
	for raw, w := range wantInputs {
		if !jsonEqual(inputs[raw], w) {
			t.Errorf("%s input = %s, want %s", raw, inputs[raw], w)
		}
	}
	if p := got.Items[16]; p.Text != "What does this error screenshot say?" || len(p.Images) != 1 || p.Images[0].MIME != "image/png" {
		t.Errorf("image prompt = %+v", p)
	}
	if p := got.Items[15]; p.Text != "and document it in the README" {
		t.Errorf("string-content prompt = %q", p.Text)
	}
}

func jsonEqual(got, want string) bool {
	var a, b any
	if json.Unmarshal([]byte(got), &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	return cmp.Equal(a, b)
}

func TestParseLayouts(t *testing.T) {
	h := newHome(t)
	t.Run("IDE nested layout without a store", func(t *testing.T) {
		got := parse(t, filepath.Join(h.project, ideID, ideID+".jsonl"), transcript.ParseOptions{})
		if got.ID != ideID || got.CWD != h.ws || got.Title != "Add a /healthz endpoint to the server" || got.Model != "" || !got.StartedAt.IsZero() {
			t.Errorf("got id %q cwd %q title %q model %q start %v", got.ID, got.CWD, got.Title, got.Model, got.StartedAt)
		}
	})
	t.Run("legacy text transcript", func(t *testing.T) {
		got := parse(t, filepath.Join(h.project, legacyID+".txt"), transcript.ParseOptions{})
		wantKinds := []string{"user_prompt", "thinking", "assistant_text", "tool_use:Bash", "tool_result:Bash", "tool_use:Edit", "tool_result:Edit", "assistant_text", "user_prompt"}
		if diff := cmp.Diff(wantKinds, kinds(got.Items)); diff != "" {
			t.Fatalf("items (-want +got):\n%s", diff)
		}
		if got.PromptCount != 2 || got.ToolCallCount != 2 || got.FirstPrompt != "Rename the package old to new" {
			t.Errorf("session = %+v", got.Session)
		}
		checks := map[int]string{1: "Let me look\nat the files first.", 4: "ok", 6: "The file was updated.", 8: "thanks"}
		for i, w := range checks {
			if got.Items[i].Text != w {
				t.Errorf("item %d = %q, want %q", i, got.Items[i].Text, w)
			}
		}
		if !jsonEqual(string(got.Items[5].Input), `{"file_path":"/srv/app/a.go","old_string":"package old","new_string":"package new"}`) {
			t.Errorf("edit input = %s", got.Items[5].Input)
		}
		if got.Items[4].CallID != got.Items[3].CallID || got.Items[6].CallID != got.Items[5].CallID {
			t.Error("results are not matched to their calls")
		}
	})
	t.Run("chat store without a transcript", func(t *testing.T) {
		got := parse(t, filepath.Join(h.chats, storeID, "store.db"), transcript.ParseOptions{})
		want := transcript.Session{
			Provider: Name, ID: storeID, Path: filepath.Join(h.chats, storeID, "store.db"), CWD: h.ws,
			Title: "Fix flaky CI", FirstPrompt: "Why is CI flaky?", PromptCount: 1, ToolCallCount: 1,
			Model: "claude-4.5-opus-high-thinking", StartedAt: time.UnixMilli(1796040000000).UTC(),
		}
		if diff := cmp.Diff(want, got.Session); diff != "" {
			t.Errorf("session (-want +got):\n%s", diff)
		}
		wantKinds := []string{"user_prompt", "thinking", "tool_use:Bash", "tool_result:Bash", "assistant_text"}
		if diff := cmp.Diff(wantKinds, kinds(got.Items)); diff != "" {
			t.Errorf("items (-want +got):\n%s", diff)
		}
		if r := got.Items[3]; r.CallID != "toolu_01" || !strings.Contains(r.Text, "FAIL: TestTimeout") {
			t.Errorf("result = %+v", r)
		}
	})
}

func TestParseJSONLRules(t *testing.T) {
	tests := []struct {
		name, content string
		prompts       []string
		results       []string
	}{
		{"string content without user_query is taken whole", `{"role":"user","message":{"content":"plain question"}}`, []string{"plain question"}, nil},
		{"several user_query elements are joined", `{"role":"user","message":{"content":[{"type":"text","text":"<attached_files>x</attached_files><user_query>one</user_query> and <user_query>two</user_query>"}]}}`, []string{"one\n\ntwo"}, nil},
		{"a leading timestamp is dropped", `{"role":"user","message":{"content":"<timestamp>today</timestamp>\nhello"}}`, []string{"hello"}, nil},
		{"tool results match by id, else the oldest open call", `{"role":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"Read","input":{}},{"type":"tool_use","name":"Shell","input":{}}]}}
{"role":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"first open"}]},{"type":"tool_result","tool_use_id":"a","content":"by id","is_error":true}]}}`, nil, []string{"1#2:first open:false", "a:by id:true"}},
		{"empty user text is no prompt", `{"role":"user","message":{"content":[{"type":"text","text":"  "}]}}`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder("x.jsonl", "x", transcript.ParseOptions{})
			parseJSONL(b, strings.NewReader(tt.content))
			got := b.finish()
			var prompts, results []string
			for _, it := range got.Items {
				switch it.Kind {
				case transcript.UserPrompt:
					prompts = append(prompts, it.Text)
				case transcript.ToolResult:
					results = append(results, fmt.Sprintf("%s:%s:%v", it.CallID, it.Text, it.IsError))
				}
			}
			if diff := cmp.Diff(tt.prompts, prompts); diff != "" {
				t.Errorf("prompts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.results, results); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummaryOnlyMatchesFull(t *testing.T) {
	h := newHome(t)
	for _, p := range []string{
		filepath.Join(h.project, cliID+".jsonl"), filepath.Join(h.project, legacyID+".txt"),
		filepath.Join(h.project, ideID, ideID+".jsonl"), filepath.Join(h.chats, storeID, "store.db"),
	} {
		t.Run(filepath.Base(p), func(t *testing.T) {
			full := parse(t, p, transcript.ParseOptions{})
			sum := parse(t, p, transcript.ParseOptions{SummaryOnly: true})
			if len(sum.Items) != 0 {
				t.Errorf("summary built %d items", len(sum.Items))
			}
			if diff := cmp.Diff(full.Session, sum.Session); diff != "" {
				t.Errorf("(-full +summary):\n%s", diff)
			}
		})
	}
}

// listing records a directory's names, sizes and the bytes of every file
// but the -shm index a WAL reader uses.
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, _ := e.Info()
		v := fmt.Sprint(fi.Mode(), " ", fi.Size())
		if !strings.HasSuffix(e.Name(), "-shm") {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			v += " " + hex.EncodeToString(b)
		}
		out[e.Name()] = v
	}
	return out
}

// The chat store is never written: its bytes and its directory stay the
// same whether it was closed cleanly or is live with a WAL.
func TestStoreReadOnly(t *testing.T) {
	h := newHome(t)
	transcriptPath := filepath.Join(h.project, cliID+".jsonl")
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprintf("live=%v", live), func(t *testing.T) {
			storeDir := filepath.Join(h.chats, cliID)
			if live {
				w, err := sql.Open("sqlite", filepath.Join(storeDir, "store.db")+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
				if err != nil {
					t.Fatal(err)
				}
				w.SetMaxOpenConns(1)
				m, _ := json.Marshal(map[string]any{"agentId": cliID, "name": "Renamed while live", "lastUsedModel": "gpt-5"})
				if _, err := w.Exec("UPDATE meta SET value = ? WHERE key = '0'", hex.EncodeToString(m)); err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				if fi, err := os.Stat(filepath.Join(storeDir, "store.db-wal")); err != nil || fi.Size() == 0 {
					t.Fatalf("no live WAL: %v", err)
				}
			}
			before := listing(t, storeDir)
			got := parse(t, transcriptPath, transcript.ParseOptions{})
			parse(t, filepath.Join(h.chats, storeID, "store.db"), transcript.ParseOptions{})
			if diff := cmp.Diff(before, listing(t, storeDir)); diff != "" {
				t.Errorf("store changed (-before +after):\n%s", diff)
			}
			want := "Health endpoint"
			if live {
				want = "Renamed while live"
			}
			if got.Title != want {
				t.Errorf("title = %q, want %q", got.Title, want)
			}
		})
	}
}

func TestResolveProject(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/my-app.v2", "a/my-app/v2", "a/.config/tool", "b/x_y z"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, path, hash, want string
	}{
		{"md5 picks between ambiguous paths", "a/my-app.v2", md5hex(filepath.Join(root, "a/my-app.v2")), "a/my-app.v2"},
		{"md5 picks the other one", "a/my-app/v2", md5hex(filepath.Join(root, "a/my-app/v2")), "a/my-app/v2"},
		{"hidden directory", "a/.config/tool", "", "a/.config/tool"},
		{"underscore and space", "b/x_y z", "", "b/x_y z"},
		{"gone", "c/nope", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := ""
			if tt.want != "" {
				want = filepath.Join(root, tt.want)
			}
			if got := resolveUncached(sanitize(filepath.Join(root, tt.path)), tt.hash); got != want {
				t.Errorf("resolve = %q, want %q", got, want)
			}
		})
	}
	t.Run("bounded on long unresolvable names", func(t *testing.T) {
		if got := resolveUncached(strings.Repeat("a-", 60)+"b", ""); got != "" {
			t.Errorf("resolved %q", got)
		}
	})
}

func TestDiscover(t *testing.T) {
	h := newHome(t)
	files, err := New().Discover(t.Context(), transcript.Env{Home: h.home})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	want := []string{
		filepath.Join(h.chats, storeID, "store.db"),
		filepath.Join(h.project, cliID+".jsonl"),
		filepath.Join(h.project, legacyID+".txt"),
		filepath.Join(h.project, ideID, ideID+".jsonl"),
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	t.Run("a store newer than its transcript", func(t *testing.T) {
		future := time.Now().Add(time.Hour)
		if err := os.Chtimes(filepath.Join(h.chats, cliID, "store.db"), future, future); err != nil {
			t.Fatal(err)
		}
		files, _ := New().Discover(t.Context(), transcript.Env{Home: h.home})
		for _, f := range files {
			if f.Path == filepath.Join(h.project, cliID+".jsonl") && !f.ModTime.Equal(future) {
				t.Errorf("transcript mtime %v, want the store's %v", f.ModTime, future)
			}
		}
	})
	t.Run("missing roots", func(t *testing.T) {
		files, err := New().Discover(t.Context(), transcript.Env{Home: t.TempDir()})
		if err != nil || len(files) != 0 {
			t.Errorf("%v %v", files, err)
		}
		if New().Roots(transcript.Env{}) != nil {
			t.Error("roots without a home")
		}
	})
}

func TestParseErrors(t *testing.T) {
	if _, err := New().Parse(t.Context(), transcript.Env{}, filepath.Join(t.TempDir(), "x.jsonl"), transcript.ParseOptions{}); err == nil {
		t.Error("no error for a missing file")
	}
	p := filepath.Join(t.TempDir(), "store.db")
	if err := os.WriteFile(p, append([]byte("SQLite format 3\x00"), make([]byte, 100)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New().Parse(t.Context(), transcript.Env{}, p, transcript.ParseOptions{}); err == nil {
		t.Error("no error for a corrupt store")
	}
}
