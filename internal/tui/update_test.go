package tui

import (
	"errors"
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/musterhq/muster/internal/proto"
)

func TestKeys(t *testing.T) {
	tests := []struct {
		name     string
		backend  func() *fakeBackend // default: fixture sessions and items
		selected string              // Options.Select
		keys     []string

		wantSel     string
		wantFocus   focus
		wantHelp    bool
		wantConfirm string
		wantAttach  string
		wantQuit    bool
		wantStatus  string
		wantBusy    bool
		wantCalls   []string // actions the last key's command performs

		wantConfirmAll bool
		wantFilter     string
		wantFiltering  bool
		wantShown      int // visible sessions; 0 means do not check unless a filter is wanted
	}{
		{name: "j moves down", keys: []string{"j"}, wantSel: "web"},
		{name: "f folds the exited and restorable sessions", selected: "old", keys: []string{"f"},
			wantSel: "sleepy", wantShown: 7, wantStatus: "3 exited or restorable sessions folded; f shows them"},
		{name: "f twice shows them again", keys: []string{"f", "f"},
			wantSel: "docs", wantShown: 10, wantStatus: "exited and restorable sessions shown"},
		{name: "d groups by directory", keys: []string{"d"},
			wantSel: "docs", wantStatus: "grouped by directory; d groups by state"},
		{name: "down moves down", keys: []string{"down", "down"}, wantSel: "tests"},
		{name: "k at the top stays", keys: []string{"k"}, wantSel: "docs"},
		{name: "up moves up", selected: "web", keys: []string{"up"}, wantSel: "docs"},
		{name: "j at the bottom stays", selected: "gone", keys: []string{"j"}, wantSel: "gone"},
		{name: "G goes to the last row", keys: []string{"G"}, wantSel: "gone"},
		{name: "end goes to the last row", keys: []string{"end"}, wantSel: "gone"},
		{name: "g goes to the first row", selected: "tests", keys: []string{"g"}, wantSel: "docs"},
		{name: "an unknown selection starts at the top", selected: "nope", keys: []string{"j"}, wantSel: "web"},
		{name: "enter attaches to a live session", selected: "web", keys: []string{"enter"},
			wantSel: "web", wantAttach: "web", wantQuit: true},
		{name: "enter on a restorable session explains", selected: "old", keys: []string{"enter"},
			wantSel: "old", wantStatus: "old is not running; r resumes it"},
		{name: "enter on an exited session explains", selected: "done", keys: []string{"enter"},
			wantSel: "done", wantStatus: "done has exited; r starts it again, x removes it"},
		{name: "enter in the drawer attaches to the item's session", keys: []string{"tab", "j", "enter"},
			wantSel: "docs", wantFocus: focusAttention, wantAttach: "web", wantQuit: true},
		{name: "tab goes back to the sessions", keys: []string{"tab", "tab", "j"}, wantSel: "web"},
		{name: "tab with an empty drawer stays", backend: func() *fakeBackend { return &fakeBackend{sessions: fixtureSessions()} },
			keys: []string{"tab", "j"}, wantSel: "web"},
		{name: "j in the drawer leaves the session cursor", keys: []string{"tab", "j", "j", "j"},
			wantSel: "docs", wantFocus: focusAttention},
		{name: "a acks the selected session's items", selected: "docs", keys: []string{"a"},
			wantSel: "docs", wantBusy: true, wantCalls: []string{"ack 3"}},
		{name: "a with nothing open for the session", selected: "api", keys: []string{"a"},
			wantSel: "api", wantStatus: "nothing to acknowledge for api"},
		{name: "a in the drawer acks the selected item", keys: []string{"tab", "j", "j", "a"},
			wantSel: "docs", wantFocus: focusAttention, wantBusy: true, wantCalls: []string{"ack 12"}},
		{name: "A asks first", keys: []string{"A"}, wantSel: "docs", wantConfirmAll: true},
		{name: "A then y acks every open item", keys: []string{"A", "y"}, wantSel: "docs", wantBusy: true, wantCalls: []string{"ack --all"}},
		{name: "A then n cancels", keys: []string{"A", "n"}, wantSel: "docs", wantStatus: "acknowledge all cancelled"},
		{name: "A with an empty drawer", backend: func() *fakeBackend { return &fakeBackend{sessions: fixtureSessions()} },
			keys: []string{"A"}, wantSel: "docs", wantStatus: "nothing needs your attention"},
		{name: "r resumes the selected session", selected: "old", keys: []string{"r"},
			wantSel: "old", wantBusy: true, wantCalls: []string{"resume old"}},
		{name: "r restarts an exited session", selected: "done", keys: []string{"r"},
			wantSel: "done", wantBusy: true, wantCalls: []string{"resume done"}},
		{name: "r on a live session refuses", selected: "api", keys: []string{"r"}, wantSel: "api", wantStatus: "api is already running"},
		{name: "R resumes every restorable session", keys: []string{"R"},
			wantSel: "docs", wantBusy: true, wantCalls: []string{"resume --all"}},
		{name: "R with nothing to restore", backend: func() *fakeBackend { return &fakeBackend{sessions: fixtureSessions()[:3]} },
			keys: []string{"R"}, wantSel: "docs", wantStatus: "no session to restore"},
		{name: "a second action while one runs is refused", selected: "old", keys: []string{"r", "R"},
			wantSel: "old", wantBusy: true, wantStatus: "busy: resuming old…"},
		{name: "x asks first", selected: "tests", keys: []string{"x"}, wantSel: "tests", wantConfirm: "tests"},
		{name: "x then y kills", selected: "tests", keys: []string{"x", "y"},
			wantSel: "tests", wantBusy: true, wantCalls: []string{"kill tests"}},
		{name: "x then n cancels", selected: "tests", keys: []string{"x", "n"}, wantSel: "tests", wantStatus: "kill cancelled"},
		{name: "x then q cancels and stays", selected: "tests", keys: []string{"x", "q"}, wantSel: "tests", wantStatus: "kill cancelled"},
		{name: "x with no sessions does nothing", backend: func() *fakeBackend { return &fakeBackend{} }, keys: []string{"x", "y"}},
		{name: "q quits", keys: []string{"q"}, wantSel: "docs", wantQuit: true},
		{name: "ctrl+c quits", keys: []string{"ctrl+c"}, wantSel: "docs", wantQuit: true},
		{name: "? opens help and the lists ignore keys", keys: []string{"?", "j", "x", "enter", "/", "n"}, wantSel: "docs", wantHelp: true},
		{name: "? closes help", keys: []string{"?", "?", "j"}, wantSel: "web"},
		{name: "esc closes help", keys: []string{"?", "esc", "j"}, wantSel: "web"},
		{name: "q quits from help", keys: []string{"?", "q"}, wantSel: "docs", wantHelp: true, wantQuit: true},
		{name: "/ filters by name", keys: []string{"/", "b", "u"}, wantSel: "build", wantFilter: "bu", wantFiltering: true, wantShown: 1},
		{name: "/ filters by provider", keys: []string{"/", "g", "e", "m"}, wantSel: "web", wantFilter: "gem", wantFiltering: true, wantShown: 1},
		{name: "/ filters by directory", keys: []string{"/", "s", "r", "v", "enter"}, wantSel: "build", wantFilter: "srv", wantShown: 1},
		{name: "/ filters by the shortened directory", keys: []string{"/", "~", "/", "s", "r", "c", "/", "a", "p", "i"}, wantSel: "tests", wantFilter: "~/src/api", wantFiltering: true, wantShown: 2},
		{name: "the filter takes q and j as text", keys: []string{"/", "q", "j"}, wantSel: "", wantFilter: "qj", wantFiltering: true, wantShown: 0},
		{name: "backspace edits the filter", keys: []string{"/", "x", "backspace", "o"}, wantSel: "docs", wantFilter: "o", wantFiltering: true, wantShown: 10},
		{name: "esc clears the filter while typing", keys: []string{"/", "b", "u", "esc", "j"}, wantSel: "notes", wantShown: 10},
		{name: "esc clears a kept filter", keys: []string{"/", "b", "u", "enter", "esc"}, wantSel: "build", wantShown: 10},
		{name: "enter keeps the filter and keys act again", keys: []string{"/", "c", "l", "a", "u", "enter", "j"}, wantSel: "api", wantFilter: "clau", wantShown: 3},
		{name: "n jumps to the next session needing you", keys: []string{"n", "n"}, wantSel: "tests"},
		{name: "n wraps around", selected: "sleepy", keys: []string{"n"}, wantSel: "docs"},
		{name: "n from the drawer returns to the sessions", keys: []string{"tab", "n"}, wantSel: "web"},
		{name: "n with nobody waiting", backend: func() *fakeBackend { return &fakeBackend{sessions: fixtureSessions()[3:4]} },
			keys: []string{"n"}, wantSel: "build", wantStatus: "no session needs you"},
		{name: "keys with no sessions are harmless", backend: func() *fakeBackend { return &fakeBackend{} },
			keys: []string{"j", "k", "G", "enter", "a", "r", "tab"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}
			if tt.backend != nil {
				b = tt.backend()
			}
			m := loaded(t, b, 100, 30, Options{Select: tt.selected})
			before := len(b.Calls())
			var cmd tea.Cmd
			for _, k := range tt.keys {
				var next tea.Model
				next, cmd = m.Update(press(k))
				m = next.(Model)
			}
			if s, _ := m.selected(); s.Name != tt.wantSel {
				t.Errorf("selected %q, want %q", s.Name, tt.wantSel)
			}
			if m.focus != tt.wantFocus {
				t.Errorf("focus %v, want %v", m.focus, tt.wantFocus)
			}
			if m.help != tt.wantHelp {
				t.Errorf("help %v, want %v", m.help, tt.wantHelp)
			}
			if m.confirm != tt.wantConfirm {
				t.Errorf("confirm %q, want %q", m.confirm, tt.wantConfirm)
			}
			if m.confirmAll != tt.wantConfirmAll {
				t.Errorf("confirmAll %v, want %v", m.confirmAll, tt.wantConfirmAll)
			}
			if m.filter != tt.wantFilter || m.filtering != tt.wantFiltering {
				t.Errorf("filter %q (typing %v), want %q (typing %v)", m.filter, m.filtering, tt.wantFilter, tt.wantFiltering)
			}
			if (tt.wantShown != 0 || tt.wantFilter != "") && len(m.sessions) != tt.wantShown {
				t.Errorf("%d sessions shown, want %d", len(m.sessions), tt.wantShown)
			}
			if m.Attach() != tt.wantAttach {
				t.Errorf("attach %q, want %q", m.Attach(), tt.wantAttach)
			}
			if m.status != tt.wantStatus {
				t.Errorf("status %q, want %q", m.status, tt.wantStatus)
			}
			if (m.busy != "") != tt.wantBusy {
				t.Errorf("busy %q, want busy=%v", m.busy, tt.wantBusy)
			}
			// Update itself never calls the daemon.
			if calls := b.Calls()[before:]; len(calls) > 0 {
				t.Errorf("Update called the backend: %v", calls)
			}
			var msg tea.Msg
			if cmd != nil {
				msg = cmd() // the only place the backend may be called
			}
			_, quit := msg.(tea.QuitMsg)
			if quit != tt.wantQuit {
				t.Errorf("quit %v, want %v", quit, tt.wantQuit)
			}
			if _, action := msg.(actionMsg); msg != nil && !quit && !action {
				t.Errorf("the last key's command returned %T, want actionMsg", msg)
			}
			if diff := cmp.Diff(tt.wantCalls, b.Calls()[before:], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("backend calls (-want +got):\n%s", diff)
			}
		})
	}
}

// run executes cmd and applies its message, as the program would.
func run(t *testing.T, m Model, cmd tea.Cmd) (Model, tea.Cmd) {
	t.Helper()
	if cmd == nil {
		t.Fatal("no command to run")
	}
	next, cmd := m.Update(cmd())
	return next.(Model), cmd
}

func TestKillRefreshesAndMovesTheCursor(t *testing.T) {
	b := &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}
	m := loaded(t, b, 100, 30, Options{Select: "tests"})
	next, cmd := keys(t, m, "x").Update(press("y"))
	m = next.(Model)

	// The daemon removes the session; its push shows it gone.
	b.sessions = slices.DeleteFunc(b.sessions, func(s proto.SessionInfo) bool { return s.Name == "tests" })
	b.items = b.items[:2]
	m, cmd = run(t, m, cmd) // actionMsg
	if m.status != "killed tests" || !m.statusOK || m.busy != "" {
		t.Errorf("after the kill: status %q ok=%v busy %q", m.status, m.statusOK, m.busy)
	}
	if len(runCmdNoTick(cmd)) > 0 {
		t.Error("the action's end asked the daemon for something: what it changed is pushed")
	}
	m, _ = run(t, m, m.pushCmd()) // the daemon's push
	if s, _ := m.selected(); s.Name != "api" {
		t.Errorf("selected %q after the kill, want the row that took its place, api", s.Name)
	}
	if len(m.sessions) != 9 || len(m.items) != 2 {
		t.Errorf("after the refresh: %d sessions, %d items", len(m.sessions), len(m.items))
	}
}

func TestActionErrors(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		resume []ResumeOutcome
		keys   []string
		want   string
		wantOK bool
	}{
		{"daemon refusal with a hint", &proto.Error{Code: proto.CodeNotFound, Message: `no session named "old"`, Hint: "run `muster ls`"},
			nil, []string{"r"}, "resume: no session named \"old\" (run `muster ls`)", false},
		{"broken connection", errors.New("daemon closed the connection: EOF"),
			nil, []string{"x", "y"}, "kill old: daemon closed the connection: EOF", false},
		{"some resumes fail", nil,
			[]ResumeOutcome{{Name: "old", Resumed: true}, {Name: "gone", Reason: "transcript not found"}},
			[]string{"R"}, "resumed old; not resumed: gone (transcript not found)", false},
		{"all resumes work", nil,
			[]ResumeOutcome{{Name: "old", Resumed: true}, {Name: "gone", Resumed: true}},
			[]string{"R"}, "resumed old, gone", true},
		{"nothing resumed", nil, nil, []string{"R"}, "nothing to resume", true},
		{"ack", nil, nil, []string{"tab", "a"}, "acknowledged 1 item", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}
			m := loaded(t, b, 100, 30, Options{Select: "old"})
			b.err, b.resume = tt.err, tt.resume
			var cmd tea.Cmd
			for _, k := range tt.keys {
				var next tea.Model
				next, cmd = m.Update(press(k))
				m = next.(Model)
			}
			m, _ = run(t, m, cmd)
			if m.status != tt.want || m.statusOK != tt.wantOK {
				t.Errorf("status %q ok=%v, want %q ok=%v", m.status, m.statusOK, tt.want, tt.wantOK)
			}
			// The next key clears it.
			if m = keys(t, m, "j"); m.status != "" {
				t.Errorf("status %q after a key, want none", m.status)
			}
		})
	}
}

// TestWatchPushes: the dashboard shows what the daemon pushes and asks
// for nothing else; a push that leaves a list out keeps it; a broken
// stream keeps the last data, says why, and dials again, and the new
// stream's first push is shown as the truth.
func TestWatchPushes(t *testing.T) {
	b := &fakeBackend{sessions: fixtureSessions()[:2], items: fixtureItems()[:1]}
	m := New(Options{Backend: b, Now: func() time.Time { return fixtureNow }})

	// Init opens the stream; its first push is shown, and the model asks
	// for the next push and starts the clock.
	m, cmd := run(t, m, m.Init())
	if len(m.sessions) != 2 || len(m.items) != 1 || m.watch == nil || !m.ticking || cmd == nil {
		t.Fatalf("after the open: %d sessions, %d items, stream %v, clock %v", len(m.sessions), len(m.items), m.watch, m.ticking)
	}
	// A clock tick redraws the ages and asks the daemon nothing.
	before := len(b.Calls())
	next, tick := m.Update(clockMsg{})
	m = next.(Model)
	if tick == nil {
		t.Error("the clock stopped")
	}
	// A push of the sessions alone keeps the drawer.
	m = step(t, m, watchMsg{seq: m.watchSeq, upd: proto.WatchUpdate{Sessions: fixtureSessions()[:3]}})
	if len(m.sessions) != 3 || len(m.items) != 1 {
		t.Errorf("after a sessions push: %d sessions, %d items", len(m.sessions), len(m.items))
	}
	// An empty list is a list.
	m = step(t, m, watchMsg{seq: m.watchSeq, upd: proto.WatchUpdate{Attention: []proto.AttentionItem{}}})
	if len(m.sessions) != 3 || len(m.items) != 0 {
		t.Errorf("after an empty drawer: %d sessions, %d items", len(m.sessions), len(m.items))
	}
	// A push of a stream given up is dropped.
	m = step(t, m, watchMsg{seq: m.watchSeq - 1, upd: proto.WatchUpdate{Sessions: []proto.SessionInfo{}}})
	if len(m.sessions) != 3 {
		t.Errorf("a stale push was shown: %d sessions", len(m.sessions))
	}
	if got := b.Calls()[before:]; len(got) != 0 {
		t.Errorf("calls while pushed to: %v", got)
	}

	// The stream breaks: the last data stays, the status says why, and a
	// redial is scheduled rather than a poll.
	b.err = errors.New("the muster daemon is not running")
	m, cmd = run(t, m, m.pushCmd())
	if len(m.sessions) != 3 || m.err == nil || m.watch != nil || cmd == nil {
		t.Fatalf("after the break: %d sessions, err %v, stream %v", len(m.sessions), m.err, m.watch)
	}
	if got := ansi.Strip(m.statusLine(100)); got != "cannot reach the daemon: the muster daemon is not running" {
		t.Errorf("status line %q", got)
	}
	// The redial fails while the daemon is away, and is scheduled again.
	m, cmd = apply(t, m, redialMsg{seq: m.watchSeq})
	m, cmd = run(t, m, cmd)
	if m.err == nil || cmd == nil {
		t.Fatalf("a failed redial: err %v, next redial %v", m.err, cmd != nil)
	}
	// A new daemon answers: its first push replaces everything.
	b.err, b.sessions, b.items = nil, fixtureSessions()[:1], nil
	m, cmd = apply(t, m, redialMsg{seq: m.watchSeq})
	m, _ = run(t, m, cmd)
	if m.err != nil || m.watch == nil || len(m.sessions) != 1 || len(m.items) != 0 {
		t.Errorf("after the reconnect: err %v, %d sessions, %d items", m.err, len(m.sessions), len(m.items))
	}
	if m.status != "reconnected to the daemon" {
		t.Errorf("status %q after the reconnect", m.status)
	}
	// A redial that lost the race with a stream already open opens nothing.
	if _, cmd := m.Update(redialMsg{seq: m.watchSeq}); cmd != nil && len(runCmdNoTick(cmd)) > 0 {
		t.Error("a late redial opened a second stream")
	}
	if got := b.Calls(); !slices.Equal(got, []string{"watch", "watch", "watch"}) {
		t.Errorf("calls %v: the dashboard asked for more than its watch", got)
	}
}

func TestSelectionFollowsTheName(t *testing.T) {
	b := &fakeBackend{sessions: fixtureSessions()}
	m := loaded(t, b, 100, 30, Options{Select: "web"})
	// A session is created and sorts first: the cursor stays on web.
	b.sessions = append([]proto.SessionInfo{{ID: "id-new", Name: "new", State: "running", CreatedAt: ago(0)}}, b.sessions...)
	m, fetch := m.refresh()
	m = step(t, m, fetch())
	if s, _ := m.selected(); s.Name != "web" {
		t.Errorf("selected %q, want web", s.Name)
	}
	// The drawer empties while focused: focus returns to the sessions.
	b.items = fixtureItems()
	m, fetch = m.refresh()
	m = keys(t, step(t, m, fetch()), "tab")
	b.items = nil
	m, fetch = m.refresh()
	if m = step(t, m, fetch()); m.focus != focusSessions {
		t.Error("focus stayed on an empty drawer")
	}
}

func TestWindow(t *testing.T) {
	tests := []struct {
		name              string
		off, sel, rows, n int
		want              int
	}{
		{"everything fits", 3, 5, 10, 8, 0},
		{"selection below", 0, 12, 10, 30, 3},
		{"selection above", 10, 4, 10, 30, 4},
		{"selection inside", 5, 9, 10, 30, 5},
		{"list shrank", 25, 25, 10, 27, 17},
		{"no rows", 4, 2, 0, 30, 0},
		{"no selection", 4, -1, 10, 30, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := window(tt.off, tt.sel, tt.rows, tt.n); got != tt.want {
				t.Errorf("window(%d, %d, %d, %d) = %d, want %d", tt.off, tt.sel, tt.rows, tt.n, got, tt.want)
			}
		})
	}
}
