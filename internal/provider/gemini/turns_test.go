package gemini

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

const statesFile = "session-2026-12-02T03-19-aa3ac65c.jsonl"

// TestTurnsOfRecordedStates reads the chat file Gemini CLI 0.61.0 wrote
// in e2e/realcli's TestMusterGeminiStates (testdata/README.md): an Esc
// mid-turn and a refused tool end their turns with the cancel, which no
// hook reports (HookSilent); the API error ends its turn failed, which
// AfterAgent reports. The injected <session_context> is no turn, and the
// "This request failed" note after the error is no cancel.
func TestTurnsOfRecordedStates(t *testing.T) {
	path := filepath.Join("testdata", "states", statesFile)
	got := providertest.ParseTurns(t, Provider{}, path)
	want := []string{
		`start 850eeea5 03:19:56.900 "a turn to interrupt"`,
		`end interrupted 850eeea5 03:20:01.058 "chat file: info Request cancelled."`,
		`start bce003ce 03:20:22.691 "make a denied file"`,
		`end interrupted bce003ce 03:20:33.880 "chat file: info Request cancelled."`,
		`start 07a0bc6f 03:20:50.684 "please fail"`,
		`end failed 07a0bc6f 03:20:50.960 "chat file: error [API Error: {\"error\":{\"code\":400,\"message\":\"scripted failure for gemini\",\"status\":\"INVALID_ARGUMENT…"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var turns []provider.Turn
	p := Provider{}.NewTurnParser()
	for _, l := range splitLines(b) {
		turns = p.Line(l, turns)
	}
	for _, r := range turns {
		if silent := r.Op == provider.TurnEnd && r.Kind == "interrupted"; r.HookSilent != silent {
			t.Errorf("%+v: HookSilent %v, want %v", r, r.HookSilent, silent)
		}
	}
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		out = append(out, b[:i])
		b = b[min(i+1, len(b)):]
	}
	return out
}

func TestTurnLines(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"an end before any prompt says nothing", []string{
			`{"id":"i1","timestamp":"2026-12-02T03:20:01Z","type":"info","content":"Request cancelled."}`,
			`{"id":"e1","timestamp":"2026-12-02T03:20:01Z","type":"error","content":"[API Error: x]"}`}, nil},
		{"other info is no cancel", []string{
			`{"id":"u1","timestamp":"2026-12-02T03:20:00Z","type":"user","content":[{"text":"hi"}]}`,
			`{"id":"i1","timestamp":"2026-12-02T03:20:01Z","type":"info","content":"Request cancelled. Or not."}`},
			[]string{`start u1 03:20:00.000 "hi"`}},
		{"displayContent wins, tool results are no prompt", []string{
			`{"id":"u1","timestamp":"2026-12-02T03:20:00Z","type":"user","content":[{"text":"expanded @f"}],"displayContent":[{"text":"typed"}]}`,
			`{"id":"u2","timestamp":"2026-12-02T03:20:01Z","type":"user","content":[{"functionResponse":{"id":"c1","name":"x","response":{}}}]}`},
			[]string{`start u1 03:20:00.000 "typed"`}},
		{"a successful answer is not read", []string{
			`{"id":"u1","timestamp":"2026-12-02T03:20:00Z","type":"user","content":[{"text":"hi"}]}`,
			`{"id":"g1","timestamp":"2026-12-02T03:20:01Z","type":"gemini","content":"hello"}`},
			[]string{`start u1 03:20:00.000 "hi"`}},
		{"records without an id", []string{
			`{"$set":{"messages":[{"id":"u1","timestamp":"2026-12-02T03:20:00Z","type":"user","content":[{"text":"old"}]}]}}`,
			`{"$snapshot":true,"messages":[{"id":"u1","type":"user","content":"x"}]}`,
			`{"type":"user","content":"no id"}`, `{"id":"u1","type":"user"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, providertest.LineTurns(t, Provider{}, tt.lines...)); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzTurnLines(f *testing.F) {
	providertest.AddLineSeeds(f, filepath.Join("testdata", "states", statesFile))
	f.Fuzz(func(t *testing.T, data []byte) { providertest.FuzzTurnLines(t, Provider{}, data) })
}

// TestLocateChat finds a chat file by the session id (the newest of a
// resumed session's files, only one whose metadata names the whole id) or,
// without one, as the single recent chat of the working directory's
// project.
func TestLocateChat(t *testing.T) {
	home := t.TempDir()
	env := transcript.Env{Home: home, Getenv: func(string) string { return "" }}
	proj := filepath.Join(home, ".gemini", "tmp", "work")
	chats := filepath.Join(proj, "chats")
	if err := os.MkdirAll(chats, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".project_root"), []byte("/work/repo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "aa3ac65c-1884-452c-956b-62539224443c"
	write := func(name, sessionID string, mod time.Time) string {
		p := filepath.Join(chats, name)
		if err := os.WriteFile(p, []byte(`{"sessionId":"`+sessionID+`","kind":"main"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	first := write("session-2026-12-02T03-00-aa3ac65c.jsonl", id, base)
	resumed := write("session-2026-12-02T03-05-aa3ac65c.jsonl", id, base.Add(5*time.Minute))
	write("session-2026-12-02T03-06-aa3ac65c.jsonl", "aa3ac65c-0000-4000-8000-000000000000", base.Add(6*time.Minute))
	l := Provider{}.NewTurnLocator(env)
	ctx := t.Context()
	if got := l.Locate(ctx, provider.TurnQuery{NativeID: id}); got != resumed {
		t.Errorf("by id: %q, want the resumed file %q", got, resumed)
	}
	q := provider.TurnQuery{CWD: "/work/repo", Cutoff: base.Add(4 * time.Minute)}
	if got := l.Locate(ctx, q); got != "" {
		t.Errorf("two recent chats in the directory: %q, want none", got)
	}
	q.Cutoff = base.Add(330 * time.Second)
	if got := l.Locate(ctx, q); got == "" || got == first || got == resumed {
		t.Errorf("one recent chat: %q, want the newest", got)
	}
	q.Taken = func(string) bool { return true }
	if got := l.Locate(ctx, q); got != "" {
		t.Errorf("taken: %q, want none", got)
	}
	if got := l.Locate(ctx, provider.TurnQuery{CWD: "/elsewhere", Cutoff: base}); got != "" {
		t.Errorf("another directory: %q, want none", got)
	}
}
