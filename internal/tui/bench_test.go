package tui

import (
	"fmt"
	"testing"
)

// BenchmarkView renders one frame of 100 sessions and 50 open attention
// items at 160×48, with the preview of the selected pane beside them:
// go test -run '^$' -bench View ./internal/tui
func BenchmarkView(b *testing.B) {
	sessions := manySessions(100)
	for i := range sessions {
		sessions[i].Model, sessions[i].ContextTokens, sessions[i].ContextWindow = "claude-opus-5-5", int64(1000*i), 1_000_000
		switch i % 5 {
		case 0:
			sessions[i].RunState = ptr("waitingApproval")
			sessions[i].Attention = 1
		case 1:
			sessions[i].Name = fmt.Sprintf("数据库-%02d", i)
		case 4:
			sessions[i].State = "exited"
		}
	}
	t := &testing.T{}
	m := loaded(t, &fakeBackend{sessions: sessions, items: manyItems(50)}, 160, 48, Options{Select: "agent-50"})
	m = shown(t, m)
	if m.pvMode() != pvSide || m.pv.screen == nil {
		b.Fatal("no preview in the frame")
	}
	for b.Loop() {
		_ = m.View()
	}
}
