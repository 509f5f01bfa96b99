package cli

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/proto"
)

// TestDashboardOpensExternalOnce: enter on a background agent opens it
// in a pane running the CLI's attach in the agent's directory; a second
// enter while that pane lives attaches to it instead of joining the agent
// from a second pane; and the dashboard's listing leaves out the agent
// the pane has, as ls does. A listed agent named like a pane goes by its
// id, since the dashboard selects rows by name.
func TestDashboardOpensExternalOnce(t *testing.T) {
	home, path := fakeClaudeAgents(t, "0b6ecd0a", "1c7fde1b")
	var mu sync.Mutex
	list := []proto.SessionInfo{{ID: "p0", Name: "bg-1c7fde1b", Provider: "claude", State: proto.PaneRunning, Command: "claude"}}
	var news []proto.NewArgs
	muster := startCannedDaemon(t, func(m *proto.Mux) {
		proto.Handle(m, proto.OpList, func(context.Context, proto.None) ([]proto.SessionInfo, error) {
			mu.Lock()
			defer mu.Unlock()
			return append([]proto.SessionInfo{}, list...), nil
		})
		proto.Handle(m, proto.OpNew, func(_ context.Context, a proto.NewArgs) (proto.SessionInfo, error) {
			mu.Lock()
			defer mu.Unlock()
			news = append(news, a)
			s := proto.SessionInfo{ID: "p1", Name: "claude-1", Provider: a.Provider, State: proto.PaneRunning, CWD: a.Dir, Command: a.Cmd}
			list = append(list, s)
			return s, nil
		})
	})
	ios, _, _, _ := iostreams.Test()
	env := map[string]string{"MUSTER_HOME": muster, "HOME": home, "PATH": path}
	f := &Factory{IO: ios, Now: func() time.Time { return testNow }, Getenv: func(k string) string { return env[k] }}
	b := &dashboardBackend{f: f}
	defer b.Close()
	ctx := context.Background()

	rows, err := b.External(ctx, list)
	if err != nil || len(rows) != 2 {
		t.Fatalf("External = %+v, %v; want both agents", rows, err)
	}
	if rows[0].Name != "bg-0b6ecd0a" || rows[1].Name != "1c7fde1b" {
		t.Errorf("names %q, %q; want bg-0b6ecd0a and, since a pane has its name, 1c7fde1b", rows[0].Name, rows[1].Name)
	}
	for range 2 {
		name, err := b.OpenExternal(ctx, rows[0])
		if err != nil || name != "claude-1" {
			t.Fatalf("OpenExternal = %q, %v; want claude-1", name, err)
		}
	}
	mu.Lock()
	opened := append([]proto.NewArgs{}, news...)
	panes := append([]proto.SessionInfo{}, list...)
	mu.Unlock()
	var got []string
	for _, a := range opened {
		got = append(got, a.Provider+" "+a.Dir+" "+a.Cmd)
	}
	if len(got) != 1 || got[0] != "claude /src/bg claude attach 0b6ecd0a" {
		t.Errorf("panes opened: %q; want one, claude running claude attach 0b6ecd0a in /src/bg", got)
	}
	rows, err = b.External(ctx, panes)
	if err != nil || len(rows) != 1 || rows[0].External.ID != "1c7fde1b" {
		t.Errorf("External with the pane open = %+v, %v; want only 1c7fde1b", rows, err)
	}
	if _, err := b.OpenExternal(ctx, proto.SessionInfo{Name: "api"}); err == nil {
		t.Error("OpenExternal of a pane's row succeeded")
	}
}
