package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/proto"
)

// hostBackend is a fakeBackend with hosts, as the CLI's backend is once
// config.toml names some: the sessions of h1 and h2 come named HOST:NAME.
type hostBackend struct {
	*fakeBackend
	hosts []HostState
}

func (h *hostBackend) Hosts() []HostState { return h.hosts }

func hostSessions() []proto.SessionInfo {
	s := func(name string, run string) proto.SessionInfo {
		return proto.SessionInfo{ID: "id-" + name, Name: name, Provider: "claude", State: "running", CWD: "/home/u/src",
			CreatedAt: ago(time.Minute), RunState: ptr(run)}
	}
	return []proto.SessionInfo{s("here", "running"), s("h1:far", "waitingInput"), s("h2:gpu", "running")}
}

// TestDashboardShowsHosts: with hosts, the table has a HOST column and
// each session its bare name; a host that is not connected is named with
// its state and when it was last seen, and its sessions are dimmed at
// their last known state; enter on a host's session attaches to
// HOST:NAME.
func TestDashboardShowsHosts(t *testing.T) {
	b := &hostBackend{fakeBackend: &fakeBackend{sessions: hostSessions()}, hosts: []HostState{
		{Name: "h1", State: "connected", LastSeen: fixtureNow},
		{Name: "h2", State: "unreachable", Reason: "connection refused", LastSeen: fixtureNow.Add(-3 * time.Minute)},
	}}
	m := New(Options{Backend: b, Home: "/home/u", Now: func() time.Time { return fixtureNow }})
	m = step(t, m, sizeMsg(140, 30))
	m = step(t, m, m.Init()())
	frame := m.View().Content
	plain := ansi.Strip(frame)
	if !strings.Contains(plain, "HOST") || !strings.Contains(plain, "h2 unreachable, seen 3m ago") {
		t.Fatalf("no HOST column or no word on h2:\n%s", plain)
	}
	var hereLine, farLine, gpuLine string
	for _, ln := range strings.Split(frame, "\n") {
		p := ansi.Strip(ln)
		switch {
		case strings.Contains(p, " here "):
			hereLine = ln
		case strings.Contains(p, " far "):
			farLine = ln
		case strings.Contains(p, " gpu "):
			gpuLine = ln
		}
	}
	if f := strings.Fields(ansi.Strip(farLine)); len(f) < 3 || f[1] != "h1" || f[2] != "far" {
		t.Fatalf("h1:far's row: %q", ansi.Strip(farLine))
	}
	if !strings.Contains(ansi.Strip(gpuLine), "running") {
		t.Fatalf("h2:gpu lost its last known state: %q", ansi.Strip(gpuLine))
	}
	faint := "\x1b[2m"
	if !strings.HasPrefix(gpuLine, faint) || strings.HasPrefix(farLine, faint) || strings.HasPrefix(hereLine, faint) {
		t.Fatalf("only h2's session should be dimmed:\nhere %q\nfar  %q\ngpu  %q", hereLine, farLine, gpuLine)
	}
	// The session that needs the user sorts first: h1:far.
	m = keysRun(t, m, "enter")
	if m.Attach() != "h1:far" {
		t.Fatalf("enter attached to %q, want h1:far", m.Attach())
	}
}

// TestDashboardWithoutHostsHasNoHostColumn: a backend without hosts
// draws the table as it always did.
func TestDashboardWithoutHostsHasNoHostColumn(t *testing.T) {
	m := loaded(t, &fakeBackend{sessions: fixtureSessions()}, 140, 30, Options{})
	if strings.Contains(ansi.Strip(m.View().Content), "HOST") {
		t.Fatal("a HOST column without hosts")
	}
}
