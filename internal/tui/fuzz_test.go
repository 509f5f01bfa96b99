package tui

import (
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/proto"
)

// sgr matches the only escape sequences the dashboard writes itself.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// FuzzView draws text from agents and the daemon (names, paths, messages,
// reasons, unknown states): the frame must keep its size, and nothing but
// the dashboard's own colours may reach the terminal.
func FuzzView(f *testing.F) {
	f.Add("api", "claude", "/home/u/src/api", "Allow Bash(ls)?", "approval-requested", "running", "daemon stopped", uint8(80), uint8(24))
	f.Add("\x1b]0;pwned\x07x", "\x1b[2J", "/tmp/\x1b[31mred", "line\r\nbreak\tand\x00nul", "\u009b31m", "\x1bP+q\x1b\\", "\u202egnp.exe", uint8(40), uint8(10))
	f.Add("日本語の名前", "🤖", "/home/u/プロジェクト", "e\u0301 combining and \u200d zwj", "failed", "waitingApproval", "", uint8(23), uint8(7))
	f.Add(strings.Repeat("x", 300), "", "", strings.Repeat("é", 500), "", "", strings.Repeat("r", 200), uint8(255), uint8(60))
	f.Add("a", "b", "c", "d", "e", "f", "g", uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, name, prov, cwd, msg, reason, state, restore string, w, h uint8) {
		sessions := []proto.SessionInfo{
			{ID: "1", Name: name, Provider: prov, State: "running", CWD: cwd, CreatedAt: ago(0), RunState: &state, Attention: 1},
			{ID: "2", Name: name + "2", Provider: prov, State: "restorable", CWD: cwd, CreatedAt: "not a time", Reason: restore},
			{ID: "3", Name: msg, Provider: reason, State: state, CWD: msg},
		}
		items := []proto.AttentionItem{
			{ID: 1, SessionID: "1", SessionName: name, Reason: reason, Message: msg, OpenedAt: ago(0)},
			{ID: 2, SessionID: "9", Reason: msg, Message: restore},
		}
		b := &fakeBackend{sessions: sessions, items: items}
		m := loaded(t, b, int(w), int(h), Options{Notice: msg})
		for _, k := range []string{"", "x", "tab", "?"} {
			if k != "" {
				m = step(t, m, press(k))
			}
			frame := m.View().Content
			if w == 0 || h == 0 {
				if frame != "" {
					t.Fatalf("a %dx%d screen got a frame", w, h)
				}
				continue
			}
			lines := strings.Split(frame, "\n")
			if len(lines) != int(h) {
				t.Fatalf("after %q: %d lines, want %d", k, len(lines), h)
			}
			for i, l := range lines {
				if n := ansi.StringWidth(l); n > int(w) {
					t.Fatalf("after %q: line %d is %d wide, want ≤ %d: %q", k, i, n, w, l)
				}
				for _, r := range sgr.ReplaceAllString(l, "") {
					if unicode.IsControl(r) || r == 0x202e {
						t.Fatalf("after %q: line %d carries control character %U: %q", k, i, r, l)
					}
				}
			}
		}
	})
}
