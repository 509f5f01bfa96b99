package tui

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/musterhq/muster/internal/proto"
)

func fixtureChoices() []Choice {
	return ChoicesFrom(
		[]ProviderLaunch{
			{Name: "claude", Executables: []string{"claude"}, Install: "npm install -g @anthropic-ai/claude-code"},
			{Name: "codex", Executables: []string{"codex"}, Install: "npm install -g @openai/codex"},
			{Name: "gemini", Executables: []string{"gemini"}, Install: "npm install -g @google/gemini-cli"},
		},
		[]Choice{{Name: "review", Kind: "launcher", Command: "claude --model opus", Resume: "claude --resume {session_id}"}},
		"/bin/bash",
		func(exe string) (string, error) {
			if exe == "codex" {
				return "/usr/local/bin/codex", nil
			}
			return "", errors.New("not found")
		})
}

func TestChoicesFrom(t *testing.T) {
	var got []string
	for _, c := range fixtureChoices() {
		got = append(got, c.Kind+" "+c.Name+" "+c.Path)
	}
	want := []string{"provider codex /usr/local/bin/codex", "launcher review ", "shell shell /bin/bash",
		"provider claude ", "provider gemini "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("choices (-want +got):\n%s", diff)
	}
}

// typeText presses each rune of s.
func typeText(t *testing.T, m Model, s string) Model {
	t.Helper()
	for _, r := range s {
		m = step(t, m, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return m
}

func TestNewSessionDialog(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"src/api", "src/app", "src/web", ".hidden"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b := &fakeBackend{sessions: fixtureSessions(), choices: fixtureChoices()}
	m := loaded(t, b, 100, 30, Options{Home: dir, Dir: filepath.Join(dir, "src")})
	m, cmd := apply(t, m, press("c"))
	if m.dlg == nil || !m.dlg.loading || m.dlg.dir != "~/src" {
		t.Fatalf("c opens the dialog in the start directory: %+v", m.dlg)
	}
	for _, msg := range runCmd(cmd) {
		m = step(t, m, msg)
	}
	if c, _ := m.dlg.chosen(); c.Name != "codex" {
		t.Errorf("the dialog starts on %q, want the first installed provider", c.Name)
	}
	frame := ansi.Strip(m.View().Content)
	for _, want := range []string{"New session", "▸ codex", "/usr/local/bin/codex", "launcher: claude --model opus",
		"your shell, /bin/bash", "not installed: npm install -g @anthropic-ai/claude-code", "Directory   ~/src"} {
		if !strings.Contains(frame, want) {
			t.Errorf("dialog lacks %q:\n%s", want, frame)
		}
	}
	// A missing provider says how to install it and creates nothing.
	m = keys(t, m, "down", "down", "down")
	m, cmd = apply(t, m, press("enter"))
	if cmd != nil || !strings.Contains(m.dlg.err, "claude is not installed: npm install") {
		t.Errorf("enter on a missing provider: err %q, cmd %v", m.dlg.err, cmd != nil)
	}
	m = keys(t, m, "k", "k", "k", "tab")
	if m.dlg.field != dlgDir {
		t.Fatalf("tab moves to the directory, at field %d", m.dlg.field)
	}
	// Tab on the directory offered takes it and moves on, though it has
	// subdirectories to complete.
	m = keysRun(t, m, "tab")
	if m.dlg.field != dlgName || m.dlg.dir != "~/src" || m.dlg.completions != nil {
		t.Fatalf("tab on the offered directory: field %d, dir %q, completions %v; want the name field", m.dlg.field, m.dlg.dir, m.dlg.completions)
	}
	m = keys(t, m, "shift+tab")

	// Completion: one match completes, several complete their common
	// prefix and are listed, hidden ones only when asked for.
	m = typeText(t, m, "/a")
	complete := func() {
		t.Helper()
		var c tea.Cmd
		m, c = apply(t, m, press("tab"))
		for _, msg := range runCmd(c) {
			m = step(t, m, msg)
		}
	}
	complete()
	if m.dlg.dir != "~/src/ap" || !slices.Equal(m.dlg.completions, []string{"api", "app"}) {
		t.Errorf("after tab: %q %v", m.dlg.dir, m.dlg.completions)
	}
	m = typeText(t, m, "i")
	complete()
	if m.dlg.dir != "~/src/api/" || m.dlg.completions != nil {
		t.Errorf("after tab: %q %v", m.dlg.dir, m.dlg.completions)
	}
	// Tab again takes the completed directory and moves on.
	complete()
	if m.dlg.field != dlgName || m.dlg.dir != "~/src/api/" {
		t.Errorf("tab after a completion: field %d, dir %q; want the name field", m.dlg.field, m.dlg.dir)
	}
	m = keys(t, m, "shift+tab")
	m = typeText(t, m, "zz")
	complete()
	if m.dlg.err != "no directory matches" {
		t.Errorf("a path matching nothing: %q", m.dlg.err)
	}
	m = keys(t, m, "backspace", "backspace", "down")
	m = typeText(t, m, "api-fix")
	m = keys(t, m, "down")
	m = typeText(t, m, `--model "o 3" -v`)

	// Enter creates the session and attaches to it.
	m, cmd = apply(t, m, press("enter"))
	if m.busy == "" {
		t.Error("nothing in flight after enter")
	}
	before := len(b.Calls())
	for _, msg := range runCmd(cmd) {
		m, cmd = apply(t, m, msg)
	}
	want := `new provider=codex cmd="" dir=` + filepath.Join(dir, "src/api") + ` name=api-fix args=["--model" "o 3" "-v"]`
	if got := b.Calls()[before:]; len(got) != 1 || got[0] != want {
		t.Errorf("backend calls %q, want %q", got, want)
	}
	if m.Attach() != "api-fix" || m.dlg != nil {
		t.Errorf("after creating: attach %q, dialog %v", m.Attach(), m.dlg != nil)
	}
	if msgs := runCmd(cmd); len(msgs) != 1 || msgs[0] != (tea.QuitMsg{}) {
		t.Errorf("after creating, the dashboard should quit to attach: %v", msgs)
	}
}

func TestNewSessionDialogErrors(t *testing.T) {
	b := &fakeBackend{sessions: fixtureSessions(), choices: fixtureChoices()}
	dir := t.TempDir()
	m := loaded(t, b, 100, 30, Options{Dir: dir})
	m, cmd := apply(t, m, press("c"))
	for _, msg := range runCmd(cmd) {
		m = step(t, m, msg)
	}
	// The launcher runs its command; a refusal from the daemon stays in
	// the dialog, which keeps what was typed.
	// tab: to the directory; on from it.
	m = keysRun(t, m, "j", "tab", "tab")
	m = typeText(t, m, "bad name")
	m = keysRun(t, m, "tab")
	m = typeText(t, m, `"unclosed`)
	m, _ = apply(t, m, press("enter"))
	if !strings.HasPrefix(m.dlg.err, "extra arguments:") || m.dlg.field != dlgArgs {
		t.Errorf("unbalanced quotes: err %q at field %d", m.dlg.err, m.dlg.field)
	}
	m = keys(t, m, "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace")
	b.err = &proto.Error{Code: proto.CodeInvalid, Message: `invalid session name "bad name"`}
	m, cmd = apply(t, m, press("enter"))
	for _, msg := range runCmd(cmd) {
		m = step(t, m, msg)
	}
	if m.dlg == nil || m.dlg.err != `invalid session name "bad name"` || m.dlg.name != "bad name" || m.Attach() != "" {
		t.Fatalf("a refused new: %+v attach %q", m.dlg, m.Attach())
	}
	if got := b.Calls(); !strings.Contains(got[len(got)-1], `provider= cmd="claude --model opus" dir=`+dir+` name=bad name`) {
		t.Errorf("last call %q", got[len(got)-1])
	}
	m = keys(t, m, "esc")
	if m.dlg != nil || m.status != "new session cancelled" {
		t.Errorf("esc: dialog %v status %q", m.dlg != nil, m.status)
	}
}

func TestRename(t *testing.T) {
	b := &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}
	m := loaded(t, b, 100, 30, Options{Select: "api"})
	m = keys(t, m, "e")
	if !strings.Contains(ansi.Strip(m.View().Content), "rename api to: api▏") {
		t.Errorf("the status line does not ask for the new name:\n%s", ansi.Strip(m.View().Content))
	}
	m = keys(t, m, "backspace", "backspace", "backspace")
	m = typeText(t, m, "backend")
	m, cmd := apply(t, m, press("enter"))
	msgs := runCmd(cmd)
	if got := b.Calls(); got[len(got)-1] != "rename api backend" {
		t.Errorf("calls %v", got)
	}
	b.sessions[0].Name = "backend"
	m, _ = apply(t, m, msgs[0])
	m = step(t, m, m.pushCmd()())
	if s, _ := m.selected(); s.Name != "backend" || m.status != "renamed api to backend" {
		t.Errorf("after the rename: selected %q, status %q", s.Name, m.status)
	}
	// A refused rename keeps the cursor on the session.
	b.err = &proto.Error{Code: proto.CodeConflict, Message: `a session named "web" exists`}
	m = keys(t, m, "e", "ctrl+u")
	m = typeText(t, m, "web")
	m, cmd = apply(t, m, press("enter"))
	m, _ = apply(t, m, runCmd(cmd)[0])
	if m.selName != "backend" || !strings.Contains(m.status, `a session named "web" exists`) || m.statusOK {
		t.Errorf("refused rename: sel %q status %q", m.selName, m.status)
	}
	b.err = nil
	m = keys(t, m, "e", "esc")
	if m.renameFrom != "" || m.status != "rename cancelled" {
		t.Errorf("esc: renaming %q status %q", m.renameFrom, m.status)
	}
}

func TestKillMarked(t *testing.T) {
	b := &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}
	m := loaded(t, b, 100, 30, Options{Select: "api"})
	// space marks and moves down: api then build are marked; k k goes back
	// to api and space unmarks it.
	m = keys(t, m, "space", "space", "k", "k", "space")
	if got := m.marked(); !slices.Equal(got, []string{"build"}) {
		t.Fatalf("marked %v, want [build]", got)
	}
	m = keys(t, m, "j", "space")
	if got := m.marked(); !slices.Equal(got, []string{"build", "notes"}) {
		t.Fatalf("marked %v", got)
	}
	if frame := ansi.Strip(m.View().Content); !strings.Contains(frame, " ✓build") || !strings.Contains(frame, " ✓notes") {
		t.Errorf("marks are not drawn:\n%s", frame)
	}
	m = keys(t, m, "x")
	if !strings.Contains(ansi.Strip(m.View().Content), "kill 2 marked sessions (build, notes) and remove them? y/n") {
		t.Errorf("no confirmation:\n%s", ansi.Strip(m.View().Content))
	}
	m, cmd := apply(t, m, press("y"))
	msgs := runCmd(cmd)
	if got := b.Calls(); !slices.Equal(got[len(got)-2:], []string{"kill build", "kill notes"}) {
		t.Errorf("calls %v", got)
	}
	m, _ = apply(t, m, msgs[0])
	if m.status != "killed build, notes" || len(m.marks) != 0 {
		t.Errorf("after the kill: status %q marks %v", m.status, m.marks)
	}
	m = keys(t, m, "space", "x", "n")
	if m.status != "kill cancelled" || len(m.marked()) != 1 {
		t.Errorf("n: status %q marks %v", m.status, m.marks)
	}
	m = keys(t, m, "u")
	if len(m.marks) != 0 {
		t.Errorf("u left marks %v", m.marks)
	}
}

func TestExplainView(t *testing.T) {
	b := &fakeBackend{sessions: fixtureSessions(), items: fixtureItems(), explain: map[string]proto.Explanation{
		"docs": {Name: "docs", State: ptr("waitingApproval"), RunID: ptr("run-1"), RunStartedAt: ptr(ago(5 * 60e9)),
			Because: &proto.Evidence{EventID: "e2", Kind: "approval-requested", HookName: "PermissionRequest", Provider: "codex",
				Source: "hook", Message: "Allow Bash(rm -rf build)?\x1b]52;c;eA==\x07", OccurredAt: ago(3 * 60e9)},
			Attention: fixtureItems()[:1],
			Events: []proto.EventRecord{{Seq: 1, RunID: "run-1", Effect: "applied", Evidence: proto.Evidence{Kind: "started", Source: "hook"}},
				{Seq: 2, RunID: "run-1", Effect: "applied", Evidence: proto.Evidence{Kind: "approval-requested", Source: "hook"}}}},
	}}
	m := loaded(t, b, 100, 30, Options{})
	m, cmd := apply(t, m, press("i"))
	m = step(t, m, cmd())
	frame := m.View().Content
	if strings.Contains(frame, "]52;") {
		t.Error("the explain view passed an escape sequence through")
	}
	plain := ansi.Strip(frame)
	for _, want := range []string{"Explain docs", "▲ waitingApproval", "run           run-1",
		"because       approval-requested (PermissionRequest) from codex via hook", "Allow Bash(rm -rf build)?", "#3", "Events (2)"} {
		if !strings.Contains(plain, want) {
			t.Errorf("explain view lacks %q:\n%s", want, plain)
		}
	}
	m = keys(t, m, "esc", "j", "i")
	m = step(t, m, explainMsg{name: "web", err: &proto.Error{Code: proto.CodeNotFound, Message: `no session named "web"`}})
	if !strings.Contains(ansi.Strip(m.View().Content), `no session named "web"`) {
		t.Errorf("a failed explain does not say why:\n%s", ansi.Strip(m.View().Content))
	}
	m = keys(t, m, "q")
	if m.explain != nil || m.quitting {
		t.Error("q closes the explain view without quitting")
	}
}

func TestMouse(t *testing.T) {
	b := &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}
	m := loaded(t, b, 100, 30, Options{})
	click := func(x, y int) tea.Cmd {
		var cmd tea.Cmd
		m, cmd = apply(t, m, tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
		return cmd
	}
	// Row 3 is the first session (title, filter line, header).
	click(5, 5)
	if m.selName != "tests" {
		t.Errorf("click on the third row selected %q", m.selName)
	}
	m, _ = apply(t, m, tea.MouseWheelMsg{X: 5, Y: 5, Button: tea.MouseWheelDown})
	if m.selName != "api" {
		t.Errorf("wheel down selected %q", m.selName)
	}
	// The drawer's first item: after 10 sessions, a blank line and its title.
	click(5, 3+10+2)
	if m.focus != focusAttention || m.selItem != 3 {
		t.Errorf("click on the drawer: focus %v item %d", m.focus, m.selItem)
	}
	click(5, 0) // the title line: nothing
	if m.focus != focusAttention || m.selItem != 3 {
		t.Error("a click on the title changed the selection")
	}
	click(5, 4)
	if m.focus != focusSessions || m.selName != "web" {
		t.Errorf("click back on the list: focus %v sel %q", m.focus, m.selName)
	}
	cmd := click(5, 4)
	if m.Attach() != "web" || cmd == nil {
		t.Errorf("a click on the selected session attaches: %q", m.Attach())
	}
}

// keysRun presses ks in order and applies what their commands return at
// once (no ticks or streams may be among them).
func keysRun(t *testing.T, m Model, ks ...string) Model {
	t.Helper()
	for _, k := range ks {
		var cmd tea.Cmd
		m, cmd = apply(t, m, press(k))
		for _, msg := range runCmd(cmd) {
			m = step(t, m, msg)
		}
	}
	return m
}

func TestRestorePrompt(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keys      []string
		wantCalls []string
		status    string
	}{
		{"enter restores every checked one", []string{"enter"}, []string{"resume old gone"}, ""},
		{"space unchecks", []string{"j", "space", "enter"}, []string{"resume old"}, ""},
		{"a restores all", []string{"a"}, []string{"resume --all"}, ""},
		{"esc restores none", []string{"esc"}, nil, "nothing restored; r or R restores later"},
		{"none checked restores none", []string{"space", "j", "space", "enter"}, nil, "nothing restored; r or R restores later"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}
			m := loadedPrompting(t, b, 100, 30, Options{})
			if m.restore == nil || len(m.restore.sessions) != 2 {
				t.Fatalf("no prompt for the two restorable sessions: %+v", m.restore)
			}
			frame := ansi.Strip(m.View().Content)
			for _, want := range []string{"Restore 2 sessions?", "[✓] old ", "the daemon died", "[✓] gone", "transcript not found"} {
				if !strings.Contains(frame, want) {
					t.Errorf("prompt lacks %q:\n%s", want, frame)
				}
			}
			before := len(b.Calls())
			var cmd tea.Cmd
			for _, k := range tc.keys {
				m, cmd = apply(t, m, press(k))
			}
			runCmd(cmd)
			if diff := cmp.Diff(tc.wantCalls, b.Calls()[before:], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if m.restore != nil || m.status != tc.status {
				t.Errorf("prompt open %v, status %q", m.restore != nil, m.status)
			}
			// The same sessions are not offered twice, also after an attach.
			m, _ = run(t, m, m.pushCmd())
			m2 := New(Options{Backend: b, State: m.State()})
			m2, _ = run(t, step(t, m2, sizeMsg(100, 30)), m2.Init())
			if m.restore != nil || m2.restore != nil {
				t.Error("the prompt came back for sessions already offered")
			}
		})
	}
}

// TestAutocontinueToggle: L turns the selected session's continue after
// a usage limit on when it is off, and off when it is on.
func TestAutocontinueToggle(t *testing.T) {
	sessions := fixtureSessions()
	b := &fakeBackend{sessions: sessions}
	m := loaded(t, b, 100, 30, Options{Select: "api"})
	m = keysRun(t, m, "L")
	if m.status != "api: muster continues it when its usage limit resets" || !m.statusOK {
		t.Errorf("status %q ok=%v", m.status, m.statusOK)
	}
	for i := range b.sessions {
		if b.sessions[i].Name == "api" {
			b.sessions[i].ContinueAfterLimit = true
		}
	}
	m, _ = run(t, m, m.pushCmd())
	m = keysRun(t, m, "L")
	if want := []string{"autocontinue api true", "autocontinue api false"}; !slices.Equal(slices.DeleteFunc(b.Calls(), func(c string) bool { return !strings.HasPrefix(c, "autocontinue") }), want) {
		t.Errorf("calls %v, want %v", b.Calls(), want)
	}
}

// TestNewSessionDialogWorktree: the dialog's worktree field asks `new` for
// a git worktree: space turns it on (branch muster/NAME), a typed branch
// names it, and off sends none.
func TestNewSessionDialogWorktree(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		keys []string
		text string
		want string
	}{
		{"off", nil, "", ""},
		{"space", []string{"space"}, "", ` worktree=""`},
		{"branch", nil, "fix/login", ` worktree="fix/login"`},
		{"space twice", []string{"space", "space"}, "", ""},
		{"branch erased keeps it on", []string{"space"}, "x", ` worktree=""`},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &fakeBackend{sessions: fixtureSessions(), choices: fixtureChoices()}
			m := loaded(t, b, 100, 30, Options{Dir: dir})
			m, cmd := apply(t, m, press("c"))
			for _, msg := range runCmd(cmd) {
				m = step(t, m, msg)
			}
			m = keys(t, m, "shift+tab")
			if m.dlg.field != dlgWorktree {
				t.Fatalf("shift+tab from the picker: field %d, want the worktree field", m.dlg.field)
			}
			if view := ansi.Strip(m.View().Content); !strings.Contains(view, "Worktree    [ ] space or a branch name") {
				t.Errorf("the worktree field is not shown off:\n%s", view)
			}
			m = keys(t, m, c.keys...)
			m = typeText(t, m, c.text)
			if c.name == "branch erased keeps it on" {
				m = keys(t, m, "backspace")
			}
			if c.want != "" && !strings.Contains(ansi.Strip(m.View().Content), "Worktree    [x] branch "+c.text) && c.text != "x" {
				t.Errorf("the worktree field is not shown on:\n%s", ansi.Strip(m.View().Content))
			}
			m, cmd = apply(t, m, press("enter"))
			for _, msg := range runCmd(cmd) {
				m = step(t, m, msg)
			}
			got := b.Calls()
			last := got[len(got)-1]
			if !strings.HasPrefix(last, "new ") || !strings.HasSuffix(last, `args=[]`+c.want) {
				t.Errorf("backend call %q, want it to end with args=[]%s", last, c.want)
			}
		})
	}
}
