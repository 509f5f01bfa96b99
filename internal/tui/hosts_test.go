package tui

import (
	"context"
	"fmt"
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

// hostCreator is a hostBackend that starts sessions on its hosts.
type hostCreator struct {
	*hostBackend
	created []string
}

func (h *hostCreator) NewOn(_ context.Context, host string, a proto.NewArgs) (proto.SessionInfo, error) {
	h.created = append(h.created, fmt.Sprintf("new on=%s provider=%s cmd=%q dir=%s name=%s args=%q", host, a.Provider, a.Cmd, a.Dir, a.Name, a.Args))
	name := a.Name
	if name == "" {
		name = "generated"
	}
	return proto.SessionInfo{Name: host + ":" + name}, nil
}

// TestNewSessionDialogHostField: with hosts, the dialog has a host field
// after the others, on this machine at first; choosing a host offers the
// host's home as the directory (this machine's comes back with it), does
// not complete it from this machine's files nor refuse a provider this
// machine lacks, and enter starts the session there and attaches to
// HOST:NAME. Without hosts the dialog has no such field.
func TestNewSessionDialogHostField(t *testing.T) {
	dir := t.TempDir()
	b := &hostCreator{hostBackend: &hostBackend{fakeBackend: &fakeBackend{sessions: hostSessions(), choices: fixtureChoices()}, hosts: []HostState{
		{Name: "h1", State: "connected", LastSeen: fixtureNow},
		{Name: "h2", State: "unreachable", LastSeen: fixtureNow},
	}}}
	m := New(Options{Backend: b, Home: dir, Dir: dir, Now: func() time.Time { return fixtureNow }})
	m = step(t, m, sizeMsg(120, 30))
	m = step(t, m, m.Init()())
	m, cmd := apply(t, m, press("c"))
	for _, msg := range runCmd(cmd) {
		m = step(t, m, msg)
	}
	frame := ansi.Strip(m.View().Content)
	if !strings.Contains(frame, "Host        [this machine]  h1  h2") {
		t.Fatalf("no host field on this machine:\n%s", frame)
	}
	m = keys(t, m, "shift+tab")
	if m.dlg.field != dlgHost {
		t.Fatalf("shift+tab from the picker went to field %d, want the host field", m.dlg.field)
	}
	m = keys(t, m, "right")
	if m.dlg.onHost() != "h1" || m.dlg.dir != "~" {
		t.Fatalf("right on the host field: host %q dir %q", m.dlg.onHost(), m.dlg.dir)
	}
	m = keys(t, m, "right", "right")
	if m.dlg.onHost() != "" || m.dlg.dir != m.dlg.localDir {
		t.Fatalf("around the hosts: host %q dir %q", m.dlg.onHost(), m.dlg.dir)
	}
	m = keys(t, m, "left", "left")
	if frame := ansi.Strip(m.View().Content); !strings.Contains(frame, "this machine  [h1]  h2") {
		t.Fatalf("h1 not shown chosen:\n%s", frame)
	}
	// tab on the directory moves on: the host's files are not here.
	m = keys(t, m, "tab", "tab")
	m, cmd = apply(t, m, press("tab"))
	if cmd != nil || m.dlg.field != dlgName {
		t.Fatalf("tab on a host's directory: field %d, a command %v", m.dlg.field, cmd != nil)
	}
	m = keys(t, m, "shift+tab", "ctrl+u")
	m = typeText(t, m, "src/api")
	m = keys(t, m, "tab")
	m = typeText(t, m, "far2")
	// claude is not installed here; the host may have it.
	m = keys(t, m, "tab", "tab", "tab", "tab", "down", "down", "down")
	if c, _ := m.dlg.chosen(); c.Name != "claude" {
		t.Fatalf("picked %q, want the missing claude", c.Name)
	}
	m, cmd = apply(t, m, press("enter"))
	for _, msg := range runCmd(cmd) {
		m = step(t, m, msg)
	}
	want := `new on=h1 provider=claude cmd="" dir=src/api name=far2 args=[]`
	if len(b.created) != 1 || b.created[0] != want {
		t.Fatalf("created %q, want %q", b.created, want)
	}
	if m.Attach() != "h1:far2" || m.dlg != nil {
		t.Fatalf("after creating on h1: attach %q, dialog %v", m.Attach(), m.dlg != nil)
	}
	for _, c := range b.Calls() {
		if strings.HasPrefix(c, "new ") {
			t.Fatalf("a session on h1 was started here: %q", c)
		}
	}

	// Without hosts: five fields, no host line.
	m = loaded(t, &fakeBackend{sessions: fixtureSessions(), choices: fixtureChoices()}, 120, 30, Options{Home: dir, Dir: dir})
	m, cmd = apply(t, m, press("c"))
	for _, msg := range runCmd(cmd) {
		m = step(t, m, msg)
	}
	m = keys(t, m, "shift+tab")
	if m.dlg.field != dlgWorktree || strings.Contains(ansi.Strip(m.View().Content), "Host ") {
		t.Fatalf("without hosts: shift+tab to field %d\n%s", m.dlg.field, ansi.Strip(m.View().Content))
	}
}
