package tui

import (
	"fmt"
	"io"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/proto"
)

// fixtureScreen is an agent's screen as op "preview" sends it: styled
// rows, wide characters, and a row that tries to set the clipboard.
func fixtureScreen(name string) proto.PreviewScreen {
	return proto.PreviewScreen{Name: name, SurfaceID: "surf-" + name, Cols: 80, Rows: 24, Lines: []string{
		"\x1b[38;5;174m╭──────────────────────────────╮\x1b[m",
		"\x1b[38;5;174m│\x1b[m ✻ Welcome to Claude Code!    \x1b[38;5;174m│\x1b[m",
		"\x1b[38;5;174m╰──────────────────────────────╯\x1b[m",
		"> fix the failing test in 数据库",
		"\x1b[32m●\x1b[m Bash(go test ./...)",
		"  ⎿ FAIL internal/api 0.2s",
		"clip\x1b]52;c;ZXZpbA==\x07board\x1b[2J",
		"\x1b[1;33mDo you want to proceed?\x1b[m",
		" ❯ 1. Yes",
		"   2. No",
	}}
}

// withScreens makes the backend's preview of every fixture session open
// with fixtureScreen.
func withScreens(b *fakeBackend) *fakeBackend {
	b.screens = map[string]proto.PreviewScreen{}
	for _, s := range b.sessions {
		sc := fixtureScreen(s.Name)
		sc.SurfaceID = s.SurfaceID
		b.screens[s.Name] = sc
	}
	return b
}

// runCmd runs cmd and the batches it returns, and gives the messages of
// the commands that finished: it must only see commands that return at
// once (no ticks, no stream reads).
func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runCmd(c)...)
		}
		return out
	}
	if w, ok := msg.(watchMsg); msg == nil || ok && w.err == errNoPush {
		return nil
	}
	return []tea.Msg{msg}
}

// apply applies msg and returns the model and its command.
func apply(t *testing.T, m Model, msg tea.Msg) (Model, tea.Cmd) {
	t.Helper()
	next, cmd := m.Update(msg)
	return next.(Model), cmd
}

// openPreview runs the preview's open command and applies what it returns.
func openPreview(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	opened := false
	for _, msg := range runCmd(cmd) {
		if _, ok := msg.(previewOpenedMsg); ok {
			m, _ = apply(t, m, msg)
			opened = true
		}
	}
	if !opened {
		t.Fatal("no preview was opened")
	}
	return m
}

// shown puts the fixture screen of the previewed session in the box, as
// if the stream had opened with it.
func shown(t *testing.T, m Model) Model {
	t.Helper()
	if m.pv.name == "" {
		t.Fatal("no preview wanted")
	}
	return step(t, m, previewOpenedMsg{seq: m.pv.seq, screen: fixtureScreen(m.pv.name), stream: &fakeStream{closed: make(chan struct{})}})
}

func TestPreviewFollowsTheSelection(t *testing.T) {
	b := withScreens(&fakeBackend{sessions: fixtureSessions(), items: fixtureItems()})
	m := loaded(t, b, 160, 48, Options{})
	if m.pvMode() != pvSide || m.pv.name != "docs" || !m.pv.opening {
		t.Fatalf("a wide screen shows the preview of the selection beside the list: mode %v, %+v", m.pvMode(), m.pv)
	}
	m, cmd := apply(t, m, press("j"))
	if m.pv.name != "web" || !m.pv.opening {
		t.Fatalf("after j the preview is of %q (opening %v), want web", m.pv.name, m.pv.opening)
	}
	m = openPreview(t, m, cmd)
	if got := b.Calls(); got[len(got)-1] != "preview web" {
		t.Errorf("backend calls %v, want a preview of web last", got)
	}
	st := m.pv.stream.(*fakeStream)
	frame := ansi.Strip(m.View().Content)
	for _, want := range []string{"preview · web · 80×24", "Do you want to proceed?", "fix the failing test in 数据库", "clipboard"} {
		if !strings.Contains(frame, want) {
			t.Errorf("frame lacks %q:\n%s", want, frame)
		}
	}
	if strings.Contains(m.View().Content, "]52;") || strings.Contains(m.View().Content, "\x1b[2J") {
		t.Error("the preview passed an escape sequence other than SGR to the terminal")
	}

	// A push replaces the screen; the stream is read again.
	next := fixtureScreen("web")
	next.Lines = append(next.Lines, "   3. pushed-row")
	m, cmd = apply(t, m, previewMsg{seq: m.pv.seq, screen: next})
	if cmd == nil || !strings.Contains(ansi.Strip(m.View().Content), "3. pushed-row") {
		t.Errorf("a pushed screen is not shown, or the stream is not read again (cmd %v)", cmd != nil)
	}

	// Moving on closes the old stream; an open that answers late, for a
	// selection already left, is closed at once.
	m, cmd = apply(t, m, press("j"))
	runCmd(cmd) // closes web's stream, opens tests'
	select {
	case <-st.closed:
	default:
		t.Error("the stream of the session left behind is still open")
	}
	late := &fakeStream{closed: make(chan struct{})}
	m, cmd = apply(t, m, press("j"))
	m, cmd2 := apply(t, m, previewOpenedMsg{seq: m.pv.seq - 1, stream: late, screen: fixtureScreen("tests")})
	runCmd(cmd2)
	select {
	case <-late.closed:
	default:
		t.Error("a stream that opened too late was kept open")
	}
	if m.pv.name != "api" || m.pv.screen != nil {
		t.Errorf("a late open changed the preview: %+v", m.pv)
	}
	_ = cmd
}

func TestPreviewEndsAndComesBack(t *testing.T) {
	b := withScreens(&fakeBackend{sessions: fixtureSessions()})
	for i := range b.sessions {
		b.sessions[i].SurfaceID = "surf-" + b.sessions[i].Name
	}
	m := shown(t, loaded(t, b, 160, 48, Options{Select: "api"}))
	exited := fixtureScreen("api")
	exited.Exited, exited.ExitCode = true, ptr(0)
	m, _ = apply(t, m, previewMsg{seq: m.pv.seq, screen: exited})
	m, _ = apply(t, m, previewMsg{seq: m.pv.seq, err: io.EOF})
	if frame := ansi.Strip(m.View().Content); !strings.Contains(frame, "preview · api · 80×24 · exited 0") || !strings.Contains(frame, "Do you want") {
		t.Errorf("an exited pane keeps its last screen with its exit code:\n%s", frame)
	}
	// A refresh with the same surface leaves it; a resumed session (a new
	// surface) is previewed again.
	seq := m.pv.seq
	m, _ = run(t, m, m.pushCmd())
	if m.pv.seq != seq {
		t.Error("the preview of an exited pane was reopened with nothing new")
	}
	b.sessions[0].SurfaceID = "surf-api-2"
	if b.sessions[0].Name != "api" {
		t.Fatal("fixture order changed")
	}
	m, cmd := run(t, m, m.pushCmd())
	if m.pv.seq == seq || !m.pv.opening {
		t.Fatalf("the resumed session is not previewed again: %+v", m.pv)
	}
	m = openPreview(t, m, cmd)
	if m.pv.err != nil || m.pv.screen == nil {
		t.Errorf("after the reopen: %+v", m.pv)
	}

	// A refusal shows in the title and is not asked again.
	b.screens = nil
	m, cmd = apply(t, m, press("j"))
	m = openPreview(t, m, cmd)
	if frame := ansi.Strip(m.View().Content); !strings.Contains(frame, `preview · build · no session named "build"`) {
		t.Errorf("a refused preview does not say why:\n%s", frame)
	}
	if _, cmd = run(t, m, m.pushCmd()); len(runCmdNoTick(cmd)) > 0 {
		t.Error("a refused preview is asked again at each refresh")
	}
}

// runCmdNoTick lists the preview opens among cmd's batch without running
// the others (a refresh returns a tick).
func runCmdNoTick(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	b, ok := cmd().(tea.BatchMsg)
	if !ok {
		return nil
	}
	var out []tea.Msg
	for _, c := range b {
		if c == nil {
			continue
		}
		done := make(chan tea.Msg, 1)
		go func() { done <- c() }()
		select {
		case msg := <-done:
			if _, ok := msg.(previewOpenedMsg); ok {
				out = append(out, msg)
			}
		default:
		}
	}
	return out
}

func TestPreviewKeys(t *testing.T) {
	b := withScreens(&fakeBackend{sessions: fixtureSessions(), items: fixtureItems()})
	for _, tc := range []struct {
		name     string
		w, h     int
		keys     []string
		wantMode pvLayout
	}{
		{"wide: beside the list", 160, 48, nil, pvSide},
		{"tall: under the list", 100, 40, nil, pvUnder},
		{"small: hidden", 80, 24, nil, pvHidden},
		{"p hides it", 160, 48, []string{"p"}, pvHidden},
		{"p shows it on a small screen", 80, 24, []string{"p"}, pvUnder},
		{"p twice", 80, 24, []string{"p", "p"}, pvHidden},
		{"z zooms", 80, 24, []string{"z"}, pvZoom},
		{"z zooms a hidden preview", 160, 48, []string{"p", "z"}, pvZoom},
		{"z twice", 160, 48, []string{"z", "z"}, pvSide},
		{"esc leaves the zoom", 160, 48, []string{"z", "esc"}, pvSide},
		{"p leaves the zoom and hides", 160, 48, []string{"z", "p"}, pvHidden},
		{"help hides it", 160, 48, []string{"?"}, pvHidden},
		{"j keeps the zoom", 160, 48, []string{"z", "j"}, pvZoom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := keys(t, loaded(t, b, tc.w, tc.h, Options{}), tc.keys...)
			if got := m.pvMode(); got != tc.wantMode {
				t.Errorf("mode %v, want %v", got, tc.wantMode)
			}
			if (m.pv.name != "") != (tc.wantMode != pvHidden) {
				t.Errorf("preview stream for %q in mode %v", m.pv.name, tc.wantMode)
			}
			checkFrame(t, m.View().Content, tc.w, tc.h)
		})
	}
}

// TestViewPreview: goldens of the preview beside, under and instead of
// the list.
func TestViewPreview(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string
		pref pvPref
	}{
		{"on", nil, pvOn},
		{"zoom", []string{"z"}, pvAuto},
	} {
		for _, size := range [][2]int{{40, 10}, {80, 24}, {160, 48}} {
			w, h := size[0], size[1]
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, w, h), func(t *testing.T) {
				m := loaded(t, withScreens(&fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}), w, h, Options{Select: "tests"})
				m.pvPref = tc.pref
				m = keys(t, m, tc.keys...)
				m, _ = m.syncPreview()
				m = shown(t, m)
				v := m.View()
				checkFrame(t, v.Content, w, h)
				checkGolden(t, v.Content)
			})
		}
	}
}
