package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/musterhq/muster/internal/proto"
)

// rings reports whether cmd, run, writes a bell to the terminal.
func rings(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case tea.RawMsg:
		return msg.Msg == "\a"
	case tea.BatchMsg:
		for _, c := range msg {
			if rings(c) {
				return true
			}
		}
	}
	return false
}

// The dashboard rings the bell when an item opens, not for the drawer it
// found, an item that resolved, or a push that left the drawer alone; and
// not at all with [notify] bell = false.
func TestBellForNewItem(t *testing.T) {
	for _, bell := range []bool{true, false} {
		b := &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}
		m := loaded(t, b, 120, 40, Options{Bell: bell})
		push := func(u proto.WatchUpdate) bool {
			t.Helper()
			next, cmd := m.Update(watchMsg{seq: m.watchSeq, upd: u, at: fixtureNow})
			m = next.(Model)
			return rings(cmd)
		}
		items := append([]proto.AttentionItem(nil), m.rawItems...)
		if push(proto.WatchUpdate{Sessions: fixtureSessions()}) {
			t.Errorf("bell=%v: rang for a push of sessions alone", bell)
		}
		resolved := append([]proto.AttentionItem(nil), items[1:]...)
		if push(proto.WatchUpdate{Attention: resolved}) {
			t.Errorf("bell=%v: rang for an item that went away", bell)
		}
		opened := append(resolved, proto.AttentionItem{ID: 40, SessionID: "id-docs", SessionName: "docs", Reason: "input-requested", Open: true})
		if got := push(proto.WatchUpdate{Attention: opened}); got != bell {
			t.Errorf("bell=%v: rang %v for a new item", bell, got)
		}
		if push(proto.WatchUpdate{Attention: opened}) {
			t.Errorf("bell=%v: rang again for the same item", bell)
		}
	}
}
