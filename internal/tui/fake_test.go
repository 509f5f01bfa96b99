package tui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fakeBackend serves fixed data and records the actions asked of it.
type fakeBackend struct {
	mu       sync.Mutex
	sessions []proto.SessionInfo
	items    []proto.AttentionItem
	err      error // returned by every call when set
	resume   []ResumeOutcome
	screens  map[string]proto.PreviewScreen // what Preview opens with, by session
	choices  []Choice
	explain  map[string]proto.Explanation
	history  []HistoryRow
	scripts  map[string]*transcript.Transcript
	calls    []string
}

func (f *fakeBackend) record(c string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

func (f *fakeBackend) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeBackend) Watch(context.Context) (proto.WatchUpdate, WatchStream, error) {
	f.record("watch")
	if f.err != nil {
		return proto.WatchUpdate{}, nil, f.err
	}
	return f.state(), &fakeWatch{closed: make(chan struct{})}, nil
}

// state is what the daemon would push now: both lists, whole. An empty
// list is [] on the wire, not left out.
func (f *fakeBackend) state() proto.WatchUpdate {
	f.mu.Lock()
	defer f.mu.Unlock()
	return proto.WatchUpdate{
		Sessions:  append([]proto.SessionInfo{}, f.sessions...),
		Attention: append([]proto.AttentionItem{}, f.items...),
	}
}

// fakeWatch is a watch stream whose Next says at once that it has
// nothing (errNoPush, which runCmd drops), so that running a model's
// commands never blocks on it: the tests hand the model its pushes
// themselves (Model.refresh).
type fakeWatch struct {
	once   sync.Once
	closed chan struct{}
}

var errNoPush = errors.New("fakeWatch: no push")

func (s *fakeWatch) Next() (proto.WatchUpdate, error) {
	return proto.WatchUpdate{}, errNoPush
}

func (s *fakeWatch) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// refresh returns the command that delivers the daemon's next push of
// the backend's whole state (its error breaks the stream), or, while the
// daemon is away, the reopening of the stream.
func (m Model) refresh() (Model, tea.Cmd) {
	if m.watch == nil {
		return m, m.openWatchCmd(m.watchSeq + 1)
	}
	b, ok := m.backend.(*fakeBackend)
	if !ok {
		b = m.backend.(*extBackend).fakeBackend
	}
	seq, now := m.watchSeq, m.nowFn
	return m, func() tea.Msg {
		if b.err != nil {
			return watchMsg{seq: seq, err: b.err, at: now()}
		}
		return watchMsg{seq: seq, upd: b.state(), at: now()}
	}
}

// pushCmd is refresh's command.
func (m Model) pushCmd() tea.Cmd {
	_, cmd := m.refresh()
	return cmd
}

func (f *fakeBackend) Ack(_ context.Context, ids []int64, all bool) (proto.AckResult, error) {
	f.record(fmtCall("ack", ids, all))
	if f.err != nil {
		return proto.AckResult{}, f.err
	}
	return proto.AckResult{Acknowledged: ids}, nil
}

func (f *fakeBackend) Resume(_ context.Context, names []string, all bool) ([]ResumeOutcome, error) {
	f.record(fmtCall("resume", names, all))
	return f.resume, f.err
}

func (f *fakeBackend) Kill(_ context.Context, name string) error {
	f.record("kill " + name)
	return f.err
}

func (f *fakeBackend) Preview(_ context.Context, name string) (proto.PreviewScreen, PreviewStream, error) {
	f.record("preview " + name)
	if f.err != nil {
		return proto.PreviewScreen{}, nil, f.err
	}
	sc, ok := f.screens[name]
	if !ok {
		return proto.PreviewScreen{}, nil, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("no session named %q", name)}
	}
	return sc, &fakeStream{closed: make(chan struct{})}, nil
}

func (f *fakeBackend) Choices(context.Context) ([]Choice, error) {
	f.record("choices")
	return slices.Clone(f.choices), f.err
}

func (f *fakeBackend) New(_ context.Context, a proto.NewArgs) (proto.SessionInfo, error) {
	call := fmt.Sprintf("new provider=%s cmd=%q dir=%s name=%s args=%q", a.Provider, a.Cmd, a.Dir, a.Name, a.Args)
	if a.Worktree != nil {
		call += fmt.Sprintf(" worktree=%q", a.Worktree.Branch)
	}
	if a.ResumeID != "" {
		call += " resume=" + a.ResumeID
	}
	f.record(call)
	if f.err != nil {
		return proto.SessionInfo{}, f.err
	}
	name := a.Name
	if name == "" {
		name = a.Provider + "-1"
	}
	return proto.SessionInfo{ID: "id-" + name, Name: name, State: "running", Provider: a.Provider, CWD: a.Dir}, nil
}

func (f *fakeBackend) Rename(_ context.Context, name, newName string) error {
	f.record("rename " + name + " " + newName)
	return f.err
}

func (f *fakeBackend) Autocontinue(_ context.Context, name string, on bool) error {
	f.record(fmt.Sprintf("autocontinue %s %v", name, on))
	return f.err
}

func (f *fakeBackend) Explain(_ context.Context, name string) (proto.Explanation, error) {
	f.record("explain " + name)
	x, ok := f.explain[name]
	if !ok && f.err == nil {
		return x, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("no session named %q", name)}
	}
	return x, f.err
}

func (f *fakeBackend) History(_ context.Context, query string) ([]HistoryRow, error) {
	f.record("history " + query)
	var out []HistoryRow
	for _, r := range f.history {
		if query == "" || strings.Contains(strings.ToLower(r.Title+" "+r.Snippet), strings.ToLower(query)) {
			out = append(out, r)
		}
	}
	return out, f.err
}

func (f *fakeBackend) Transcript(_ context.Context, ref string) (*transcript.Transcript, error) {
	f.record("transcript " + ref)
	t, ok := f.scripts[ref]
	if !ok && f.err == nil {
		return nil, fmt.Errorf("no session %s", ref)
	}
	return t, f.err
}

func (f *fakeBackend) WriteReplay(_ context.Context, ref string) (string, error) {
	f.record("replay " + ref)
	return "/tmp/replay-" + strings.ReplaceAll(ref, ":", "-") + ".html", f.err
}

// fakeStream is a preview stream with nothing more to say until closed.
type fakeStream struct {
	once   sync.Once
	closed chan struct{}
}

func (s *fakeStream) Next() (proto.PreviewScreen, error) {
	<-s.closed
	return proto.PreviewScreen{}, io.EOF
}

func (s *fakeStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func fmtCall[T any](op string, args []T, all bool) string {
	s := op
	for _, a := range args {
		s += fmt.Sprintf(" %v", a)
	}
	if all {
		s += " --all"
	}
	return s
}

// fixtureNow is the clock of every fixture.
var fixtureNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) string { return fixtureNow.Add(-d).Format(time.RFC3339) }

func ptr[T any](v T) *T { return &v }

// fixtureSessions has one session in each state the dashboard draws.
func fixtureSessions() []proto.SessionInfo {
	run := func(name, provider, state string, attn int, cwd string, age time.Duration) proto.SessionInfo {
		s := proto.SessionInfo{
			ID: "id-" + name, Name: name, Provider: provider, State: "running", PID: 100,
			CWD: cwd, CreatedAt: ago(age), Attention: attn,
		}
		if state != "" {
			s.RunState = ptr(state)
		}
		return s
	}
	list := []proto.SessionInfo{
		run("api", "claude", "running", 0, "/home/u/src/api", 5*time.Minute),
		run("docs", "codex", "waitingApproval", 1, "/home/u/src/docs", 70*time.Minute),
		run("web", "gemini", "waitingInput", 1, "/home/u/src/web/frontend/packages/app", 3*time.Hour),
		run("build", "custom", "succeeded", 0, "/srv/build", 40*time.Second),
		run("tests", "claude", "failed", 1, "/home/u/src/api", 2*time.Minute),
		run("notes", "custom", "", 0, "/home/u", 50*time.Hour),
		run("sleepy", "cursor", "idle", 0, "/home/u/src/sleepy", 20*time.Minute),
	}
	// What the agents reported of their models and contexts: a window
	// known, one unknown (tokens used), one nearly full, none at all.
	list[0].Model, list[0].ContextTokens, list[0].ContextWindow = "claude-opus-5-5", 412_000, 1_000_000
	list[1].Model, list[1].ContextTokens, list[1].ContextWindow = "gpt-6.1-sol", 201_555, 258_400
	list[2].Model, list[2].ContextTokens = "gemini-3.1-pro-preview", 9_876
	list[4].Model, list[4].ContextTokens, list[4].ContextWindow = "claude-haiku-4-5-20251001", 195_000, 200_000
	list[6].Model = "composer-2"
	// A progress bar (OSC 9;4;1) with its value.
	list[0].Activity, list[0].ActivityPercent = "working", ptr(42)
	old := run("old", "claude", "running", 0, "/home/u/src/old", 72*time.Hour)
	old.State, old.Reason = "restorable", "the daemon died; `muster resume old` brings it back"
	gone := run("gone", "codex", "", 0, "/home/u/src/gone", 30*time.Hour)
	gone.State, gone.Reason = "restorable", "transcript not found: ~/.codex/sessions/…/rollout-1.jsonl was deleted"
	done := run("done", "custom", "succeeded", 0, "/tmp", 10*time.Minute)
	done.State, done.ExitCode = "exited", ptr(0)
	return append(list, old, gone, done)
}

func fixtureItems() []proto.AttentionItem {
	return []proto.AttentionItem{
		{ID: 3, SessionID: "id-docs", SessionName: "docs", Provider: "codex", Reason: "approval-requested",
			Message: "Allow Bash(rm -rf build)?", OpenedAt: ago(3 * time.Minute), Open: true},
		{ID: 4, SessionID: "id-web", SessionName: "web", Provider: "gemini", Reason: "input-requested",
			Message: "Which database should I use:\n  postgres or sqlite?", OpenedAt: ago(50 * time.Second), Open: true},
		{ID: 12, SessionID: "id-tests", SessionName: "tests", Provider: "claude", Reason: "failed",
			Message: "exit status 1: 3 tests failed", OpenedAt: ago(90 * time.Second), Open: true},
	}
}

// resolvedItems are items acknowledged or settled within the last day,
// and one resolved too long ago to show.
func resolvedItems() []proto.AttentionItem {
	return []proto.AttentionItem{
		{ID: 1, SessionID: "id-api", SessionName: "api", Provider: "claude", Reason: "approval-requested",
			Message: "Allow Edit(main.go)?", OpenedAt: ago(3 * time.Hour), ResolvedAt: ptr(ago(2 * time.Hour)), Resolution: "acknowledged"},
		{ID: 2, SessionID: "id-build", SessionName: "build", Provider: "custom", Reason: "failed",
			Message: "exit status 2", OpenedAt: ago(50 * time.Minute), ResolvedAt: ptr(ago(40 * time.Minute)), Resolution: "superseded"},
		{ID: 0, SessionID: "id-old", SessionName: "old", Reason: "failed",
			Message: "too old to show", OpenedAt: ago(50 * time.Hour), ResolvedAt: ptr(ago(25 * time.Hour)), Resolution: "acknowledged"},
	}
}

// loaded returns a model of size w×h that has received one refresh of the
// backend's data.
func loaded(t *testing.T, b *fakeBackend, w, h int, o Options) Model {
	t.Helper()
	o.Backend = b
	if o.Home == "" {
		o.Home = "/home/u"
	}
	o.Now = func() time.Time { return fixtureNow }
	m := New(o)
	m = step(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	msg := m.Init()()
	if _, ok := msg.(watchOpenedMsg); !ok {
		t.Fatalf("Init command returned %T, want watchOpenedMsg", msg)
	}
	m = step(t, m, msg)
	// The restore prompt that fixtures with restorable sessions open has
	// tests of its own (TestRestorePrompt).
	m.restore = nil
	m, _ = m.syncPreview()
	return m
}

// loadedPrompting is loaded with the restore prompt left open.
func loadedPrompting(t *testing.T, b *fakeBackend, w, h int, o Options) Model {
	t.Helper()
	o.Backend = b
	o.Home = "/home/u"
	o.Now = func() time.Time { return fixtureNow }
	m := step(t, New(o), tea.WindowSizeMsg{Width: w, Height: h})
	return step(t, m, m.Init()())
}

// step applies one message and returns the next model.
func step(t *testing.T, m Model, msg tea.Msg) Model {
	t.Helper()
	next, _ := m.Update(msg)
	nm, ok := next.(Model)
	if !ok {
		t.Fatalf("Update returned %T", next)
	}
	return nm
}

// press builds the message of a key as bubbletea decodes it.
func press(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+c", "ctrl+u", "ctrl+w":
		return tea.KeyPressMsg{Code: rune(k[5]), Mod: tea.ModCtrl}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	}
	r := []rune(k)
	if len(r) != 1 {
		panic("press: unknown key " + k)
	}
	if r[0] >= 'A' && r[0] <= 'Z' {
		return tea.KeyPressMsg{Code: r[0] + 'a' - 'A', ShiftedCode: r[0], Mod: tea.ModShift, Text: k}
	}
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// checkGolden compares got with testdata/<TestName>.golden.
func checkGolden(t *testing.T, got string) {
	t.Helper()
	path := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		err := errors.Join(os.MkdirAll(filepath.Dir(path), 0o755), os.WriteFile(path, []byte(got), 0o644))
		if err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func sizeMsg(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// keys presses ks in order, running no commands.
func keys(t *testing.T, m Model, ks ...string) Model {
	t.Helper()
	for _, k := range ks {
		m = step(t, m, press(k))
	}
	return m
}
