package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/transcript"
)

// manySessions makes n live sessions, to overflow the screen.
func manySessions(n int) []proto.SessionInfo {
	var out []proto.SessionInfo
	for i := range n {
		out = append(out, proto.SessionInfo{
			ID: fmt.Sprintf("id-%02d", i), Name: fmt.Sprintf("agent-%02d", i), Provider: "claude",
			State: "running", CWD: "/home/u/src", CreatedAt: ago(time.Duration(i) * time.Minute),
			RunState: ptr("running"),
		})
	}
	return out
}

func manyItems(n int) []proto.AttentionItem {
	var out []proto.AttentionItem
	for i := range n {
		out = append(out, proto.AttentionItem{
			ID: int64(i + 1), SessionID: fmt.Sprintf("id-%02d", i), SessionName: fmt.Sprintf("agent-%02d", i),
			Reason: "approval-requested", Message: "Allow Edit(main.go)?", OpenedAt: ago(time.Minute), Open: true,
		})
	}
	return out
}

// TestView renders fixed states at fixed sizes against golden files. The
// files hold the frames as the terminal gets them, colours included; `cat`
// one to see it.
func TestView(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, w, h int) Model
	}{
		{"loading", func(t *testing.T, w, h int) Model {
			return step(t, New(Options{Backend: &fakeBackend{}}), sizeMsg(w, h))
		}},
		{"empty", func(t *testing.T, w, h int) Model {
			return loaded(t, &fakeBackend{}, w, h, Options{})
		}},
		{"mixed", func(t *testing.T, w, h int) Model {
			return loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{})
		}},
		{"drawer", func(t *testing.T, w, h int) Model {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{})
			return keys(t, m, "tab", "j")
		}},
		{"confirm", func(t *testing.T, w, h int) Model {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{Select: "tests"})
			return keys(t, m, "x")
		}},
		{"folded", func(t *testing.T, w, h int) Model {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{})
			return keys(t, m, "f")
		}},
		{"bydir", func(t *testing.T, w, h int) Model {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{})
			return keys(t, m, "d")
		}},
		{"help", func(t *testing.T, w, h int) Model {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{})
			return keys(t, m, "?")
		}},
		{"notice", func(t *testing.T, w, h int) Model {
			return loaded(t, &fakeBackend{sessions: fixtureSessions()[:2]}, w, h, Options{Select: "docs", Notice: "attach docs: no session named \"docs\""})
		}},
		{"unreachable", func(t *testing.T, w, h int) Model {
			b := &fakeBackend{sessions: fixtureSessions()[:3]}
			m := loaded(t, b, w, h, Options{})
			b.err = errors.New("the muster daemon is not running")
			m, cmd := m.refresh()
			return step(t, m, cmd())
		}},
		{"wide", func(t *testing.T, w, h int) Model {
			sessions := fixtureSessions()[:4]
			sessions[0].Name, sessions[1].Name = "数据库迁移", "🚀launch"
			sessions[2].CWD = "/home/u/项目/前端"
			sessions[3].Activity = "working"
			return loaded(t, &fakeBackend{sessions: sessions}, w, h, Options{})
		}},
		{"nopreview", func(t *testing.T, w, h int) Model {
			// With the preview off the list takes the whole width: at 160
			// columns the model and context columns show.
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{})
			return keys(t, m, "p")
		}},
		{"filter", func(t *testing.T, w, h int) Model {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{})
			return keys(t, m, "/", "c", "l")
		}},
		{"resolved", func(t *testing.T, w, h int) Model {
			items := append(fixtureItems()[:1], resolvedItems()...)
			return loaded(t, &fakeBackend{sessions: fixtureSessions(), items: items}, w, h, Options{})
		}},
		{"ackall", func(t *testing.T, w, h int) Model {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{})
			return keys(t, m, "A")
		}},
		{"away", func(t *testing.T, w, h int) Model {
			b := &fakeBackend{sessions: fixtureSessions()}
			m := loaded(t, b, w, h, Options{})
			b.err = errors.New("dial unix control.sock: connect: connection refused")
			m, cmd := m.refresh()
			m = step(t, m, cmd())
			m.now = m.now.Add(5 * time.Second)
			return m
		}},
		{"nocolor", func(t *testing.T, w, h int) Model {
			return loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{NoColor: true})
		}},
		{"newsession", func(t *testing.T, w, h int) Model {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), choices: fixtureChoices()}, w, h, Options{Dir: "/home/u/src/api"})
			m = keysRun(t, m, "c", "j", "tab")
			return typeText(t, m, "-v2")
		}},
		{"marked", func(t *testing.T, w, h int) Model {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{Select: "api"})
			return keys(t, m, "space", "j", "space", "k", "x")
		}},
		{"rename", func(t *testing.T, w, h int) Model {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{Select: "api"})
			return typeText(t, keys(t, m, "e"), "-v2")
		}},
		{"restoreprompt", func(t *testing.T, w, h int) Model {
			return loadedPrompting(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{})
		}},
		{"history", func(t *testing.T, w, h int) Model {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), history: fixtureHistory()}, w, h, Options{})
			return keysRun(t, m, "h", "j")
		}},
		{"transcript", func(t *testing.T, w, h int) Model {
			b := &fakeBackend{sessions: fixtureSessions(), history: fixtureHistory(),
				scripts: map[string]*transcript.Transcript{"claude:aaaa-1111": fixtureTranscript()}}
			return keysRun(t, loaded(t, b, w, h, Options{}), "h", "enter")
		}},
		{"cost", func(t *testing.T, w, h int) Model {
			// Two live panes sampled, one over its memory ceiling: the
			// MEM CPU column at 160 columns (the preview off) and the
			// agents' total in the title bar; a worktree's branch before
			// its directory.
			sessions := fixtureSessions()
			sessions[0].RSSBytes, sessions[0].CPUPercent, sessions[0].MemoryCeiling = ptr(int64(1288490188)), ptr(12.5), 1<<30
			sessions[1].RSSBytes, sessions[1].CPUPercent = ptr(int64(350<<20)), ptr(101.0)
			// And one in a worktree of its own, with changes and commits.
			sessions[2].Worktree = &proto.WorktreeInfo{Path: "/home/u/src/api.worktrees/fix", Branch: "fix", Dirty: 1, Ahead: 2}
			m := loaded(t, &fakeBackend{sessions: sessions, items: fixtureItems()}, w, h, Options{})
			return keys(t, m, "p")
		}},
		{"overflow", func(t *testing.T, w, h int) Model {
			sessions := manySessions(60)
			for i := 50; i < 60; i++ {
				sessions[i].State, sessions[i].Reason = "restorable", "the daemon stopped"
			}
			m := loaded(t, &fakeBackend{sessions: sessions, items: manyItems(20)}, w, h, Options{Select: "agent-30"})
			return keys(t, m, "tab", "G")
		}},
	}
	for _, tt := range tests {
		for _, size := range [][2]int{{40, 10}, {80, 24}, {160, 48}} {
			w, h := size[0], size[1]
			t.Run(fmt.Sprintf("%s_%dx%d", tt.name, w, h), func(t *testing.T) {
				m := tt.setup(t, w, h)
				v := m.View()
				if !v.AltScreen {
					t.Error("the dashboard should use the alternate screen")
				}
				checkFrame(t, v.Content, w, h)
				checkGolden(t, v.Content)
			})
		}
	}
}

// checkFrame asserts the frame fills the screen exactly: h lines, none
// wider than w.
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) != h {
		t.Errorf("frame has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d columns wide, want ≤ %d: %q", i+1, n, w, ansi.Strip(l))
		}
	}
}

// TestViewTinyScreens renders sizes too small for the layout: no panic,
// and the frame still fits.
func TestViewTinyScreens(t *testing.T) {
	for _, size := range [][2]int{{1, 1}, {10, 3}, {20, 5}, {40, 8}, {300, 2}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			m := loaded(t, &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, w, h, Options{})
			for _, k := range []string{"j", "tab", "j", "?", "?"} {
				m = step(t, m, press(k))
				checkFrame(t, m.View().Content, w, h)
			}
		})
	}
}

// TestStateBadges checks that each state gets its own glyph and colour.
func TestStateBadges(t *testing.T) {
	tests := []struct {
		name      string
		s         proto.SessionInfo
		want      string
		wantColor ansi.Style
	}{
		{"running", proto.SessionInfo{State: "running", RunState: ptr("running")}, "● running", styleRunning},
		{"waitingInput", proto.SessionInfo{State: "running", RunState: ptr("waitingInput")}, "◐ waitingInput", styleInput},
		{"waitingApproval", proto.SessionInfo{State: "running", RunState: ptr("waitingApproval")}, "▲ waitingApproval", styleApproval},
		{"succeeded", proto.SessionInfo{State: "running", RunState: ptr("succeeded")}, "✓ succeeded", styleSucceeded},
		{"failed", proto.SessionInfo{State: "running", RunState: ptr("failed")}, "✗ failed", styleFailed},
		{"interrupted", proto.SessionInfo{State: "running", RunState: ptr("interrupted")}, "■ interrupted", styleInterrupted},
		{"disconnected", proto.SessionInfo{State: "running", RunState: ptr("disconnected")}, "◇ disconnected", styleDisconn},
		{"idle", proto.SessionInfo{State: "running", RunState: ptr("idle")}, "○ idle", styleIdle},
		{"live without a run", proto.SessionInfo{State: "running"}, "◌ live", nil},
		{"live, the terminal says it works: ACTIVITY shows it", proto.SessionInfo{State: "running", Activity: "working"}, "◌ live", nil},
		{"restorable wins over the run state", proto.SessionInfo{State: "restorable", RunState: ptr("running")}, "⟲ restorable", styleRestorable},
		{"exited with a code", proto.SessionInfo{State: "exited", ExitCode: ptr(137), RunState: ptr("running")}, "□ exited 137", styleQuiet},
		{"a future run state", proto.SessionInfo{State: "running", RunState: ptr("pondering")}, "· pondering", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sessionBadge(tt.s).render()
			if ansi.Strip(got) != tt.want {
				t.Errorf("badge = %q, want %q", ansi.Strip(got), tt.want)
			}
			if want := tt.wantColor.Styled(tt.want); got != want {
				t.Errorf("badge = %q, want %q", got, want)
			}
		})
	}
}

func TestCells(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"pad", cell("ab", 4), "ab  "},
		{"cut", cell("abcdef", 4), "abc…"},
		{"styled keeps its width", ansi.Strip(cell(styleBold.Styled("abcdef"), 4)), "abc…"},
		{"wide runes", cell("日本語", 5), "日本…"},
		{"width of styled ASCII", fmt.Sprint(width(styleBold.Styled("abc") + "\x1b[38;5;174md\x1b[m")), "4"},
		{"width of wide runes", fmt.Sprint(width(styleBold.Styled("数据") + "x")), "5"},
		{"width with a control", fmt.Sprint(width("a\tb")), fmt.Sprint(ansi.StringWidth("a\tb"))},
		{"path from the left", cellLeft("/home/u/src/web/app", 10), "…c/web/app"},
		{"short path", cellLeft("/tmp", 6), "/tmp  "},
		{"zero width", cell("abc", 0), ""},
		{"tilde", tilde("/home/u/src", "/home/u"), "~/src"},
		{"tilde only under home", tilde("/home/user2/x", "/home/u"), "/home/user2/x"},
		{"tilde home itself", tilde("/home/u", "/home/u"), "~"},
		{"age seconds", age(ago(42*time.Second), fixtureNow), "42s"},
		{"age days", age(ago(72*time.Hour), fixtureNow), "3d"},
		{"age in the future", age(fixtureNow.Add(time.Hour).Format(time.RFC3339), fixtureNow), "0s"},
		{"age unparsable", age("yesterday", fixtureNow), "?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

// TestViewStripsAgentText draws an approval request whose message tries
// to set the clipboard, retitle the window and clear the screen: the
// sequences go whole, the words stay.
func TestViewStripsAgentText(t *testing.T) {
	const evil = "Approve\x1b]52;c;cm0gLXJmIH4vKgo=\x07 the\x1b]0;pwned\x1b\\ update\x1b[2J\u009b31m now\x07\u202e!"
	sessions := []proto.SessionInfo{{ID: "1", Name: "api", Provider: "claude", State: "restorable", CWD: "/src/\x1b]7;file:///etc\x07app",
		CreatedAt: ago(time.Minute), RunState: ptr("waitingApproval"), Attention: 1, Reason: "gone: " + evil}}
	items := []proto.AttentionItem{{ID: 1, SessionID: "1", SessionName: "api", Reason: "approval-requested", Message: evil, OpenedAt: ago(time.Minute), Open: true}}
	m := loaded(t, &fakeBackend{sessions: sessions, items: items}, 120, 24, Options{})
	frame := sgr.ReplaceAllString(m.View().Content, "")
	for _, r := range frame {
		if r < 0x20 && r != '\n' || r >= 0x7f && r < 0xa0 || r == 0x202e {
			t.Fatalf("frame carries %U:\n%q", r, frame)
		}
	}
	for _, want := range []string{
		"#1  api   ▲ approval-requested  1m    Approve the update now!\n",
		"/src/app",
		"⟲ api   gone: Approve the update now!\n",
	} {
		if !strings.Contains(frame, want) {
			t.Errorf("frame lacks %q:\n%s", want, frame)
		}
	}
}
