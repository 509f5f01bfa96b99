package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/proto"
)

// extBackend is a fakeBackend that also lists background agents
// (ExternalSource) and opens them as the cli backend would: in the pane
// it names.
type extBackend struct {
	*fakeBackend
	ext     []proto.SessionInfo
	extErr  error
	pane    string // what OpenExternal answers
	openErr error
}

func (e *extBackend) External(_ context.Context, panes []proto.SessionInfo) ([]proto.SessionInfo, error) {
	e.record(fmt.Sprintf("external panes=%d", len(panes)))
	if e.extErr != nil {
		return nil, e.extErr
	}
	return slices.Clone(e.ext), nil
}

func (e *extBackend) OpenExternal(_ context.Context, agent proto.SessionInfo) (string, error) {
	e.record("open-external " + agent.External.ID)
	return e.pane, e.openErr
}

// fixtureAgent is a `claude --bg` agent as the cli backend lists it
// (internal/cli externalRows).
func fixtureAgent() proto.SessionInfo {
	return proto.SessionInfo{
		ID: "0b6ecd0a", Name: "bg", Provider: "claude", Pane: proto.PaneExternal, State: proto.PaneExternal, Status: "idle",
		PID: 6634, CWD: "/home/u/src/bg", CreatedAt: ago(15 * time.Minute), NativeSessionID: "0b6ecd0a-e99d-41c7-817c-23c324ac7ffa",
		Command: "claude attach 0b6ecd0a",
		External: &proto.ExternalAgent{Supervisor: "claude agents", ID: "0b6ecd0a", Status: "idle", State: "working",
			Attach: "claude attach 0b6ecd0a"},
	}
}

// first runs cmd's commands (a batch's, nested, all at once) and returns
// the first message of type T, or false once every command has returned
// (a clock tick's after ClockInterval) without one.
func first[T tea.Msg](cmd tea.Cmd) (T, bool) {
	msgs := make(chan tea.Msg, 64)
	var pending sync.WaitGroup
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		pending.Go(func() {
			msg := c()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					run(c)
				}
				return
			}
			msgs <- msg
		})
	}
	run(cmd)
	done := make(chan struct{})
	go func() { pending.Wait(); close(done) }()
	for {
		select {
		case msg := <-msgs:
			if v, ok := msg.(T); ok {
				return v, true
			}
		case <-done:
			select {
			case msg := <-msgs:
				if v, ok := msg.(T); ok {
					return v, true
				}
				continue
			default:
			}
			var zero T
			return zero, false
		}
	}
}

// clock is a fixture clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// loadedExt opens the dashboard on b and applies the first listing of
// the background agents, which the watch's first push asks for.
func loadedExt(t *testing.T, b *extBackend, w, h int, clk *clock) Model {
	t.Helper()
	m := New(Options{Backend: b, Home: "/home/u", Now: clk.now})
	m = step(t, m, sizeMsg(w, h))
	m, cmd := apply(t, m, m.Init()())
	m.restore = nil
	msg, ok := first[externalMsg](cmd)
	if !ok {
		t.Fatalf("the first push asked for no listing of the background agents; calls %v", b.Calls())
	}
	return step(t, m, msg)
}

func countCalls(calls []string, prefix string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

// TestExternalAgentsListed: issue 25, Required 5. The agents Claude
// Code's supervisor runs show beside the panes, marked external with the
// CLI's status and state, after the live panes and before the exited
// ones; the preview says how to open one; a push from the daemon keeps
// them; they are asked for off the UI loop, one listing at a time, once
// per ExternalInterval.
func TestExternalAgentsListed(t *testing.T) {
	clk := &clock{t: fixtureNow}
	b := &extBackend{fakeBackend: &fakeBackend{sessions: fixtureSessions()}, ext: []proto.SessionInfo{fixtureAgent()}}
	m := loadedExt(t, b, 160, 48, clk)
	if got := b.Calls(); !slices.Contains(got, fmt.Sprintf("external panes=%d", len(fixtureSessions()))) {
		t.Errorf("calls %v: want the listing given the panes as pushed", got)
	}
	var order []string
	for _, s := range m.sessions {
		order = append(order, s.Name)
	}
	if i := slices.Index(order, "bg"); i < 0 || i != slices.Index(order, "sleepy")+1 || order[i+1] != "done" {
		t.Errorf("order %v: want bg after the live panes, before the restorable and exited ones", order)
	}
	m.selName = "bg"
	m, _ = m.syncPreview()
	frame := ansi.Strip(m.View().Content)
	for _, want := range []string{"10 sessions", "1 external", "↗ external idle", "bg is run by claude agents, not muster;", "(claude attach 0b6ecd0a)"} {
		if !strings.Contains(frame, want) {
			t.Errorf("frame lacks %q:\n%s", want, frame)
		}
	}
	// Without the preview the list has room for ACTIVITY: the CLI's word
	// for the agent.
	if frame := ansi.Strip(keys(t, m, "p").View().Content); !strings.Contains(frame, "↗ external idle         working") {
		t.Errorf("frame without the preview lacks the agent's state:\n%s", frame)
	}
	if slices.Contains(b.Calls(), "preview bg") {
		t.Error("the daemon was asked for a preview of an agent it does not run")
	}

	// A push from the daemon keeps the agents listed.
	m, cmd := m.refresh()
	m = step(t, m, cmd())
	if _, ok := m.sessionByID("0b6ecd0a"); !ok {
		t.Error("a push from the daemon dropped the background agent")
	}

	// The clock ticks: no listing until ExternalInterval has passed
	// since the last one came back, and none while one is under way.
	listings := func() int { return countCalls(b.Calls(), "external ") }
	m, cmd = apply(t, m, clockMsg{})
	if _, ok := first[externalMsg](cmd); ok || listings() != 1 {
		t.Fatalf("a tick before ExternalInterval listed the agents again (%d listings)", listings())
	}
	clk.add(ExternalInterval)
	b.mu.Lock()
	b.ext = nil
	b.mu.Unlock()
	m, cmd = apply(t, m, clockMsg{})
	m2, cmd2 := apply(t, m, clockMsg{})
	msg, ok := first[externalMsg](cmd)
	if !ok {
		t.Fatal("a tick after ExternalInterval did not list the agents again")
	}
	if _, ok := first[externalMsg](cmd2); ok {
		t.Error("a tick while a listing was under way started another")
	}
	m = step(t, m2, msg)
	if _, ok := m.sessionByID("0b6ecd0a"); ok || listings() != 2 {
		t.Errorf("after the agent ended: still listed, or %d listings (want 2)", listings())
	}
}

// TestExternalAgentListingFails: a supervisor that cannot be asked is
// said once in the status line; the panes are still listed.
func TestExternalAgentListingFails(t *testing.T) {
	clk := &clock{t: fixtureNow}
	b := &extBackend{fakeBackend: &fakeBackend{sessions: fixtureSessions()}, extErr: fmt.Errorf("claude agents --json: exit status 1")}
	m := loadedExt(t, b, 120, 40, clk)
	if !strings.Contains(m.status, "background agents: claude agents --json: exit status 1") || len(m.sessions) != len(fixtureSessions()) {
		t.Errorf("status %q, %d sessions", m.status, len(m.sessions))
	}
	m = keys(t, m, "j")
	clk.add(ExternalInterval)
	m, cmd := apply(t, m, clockMsg{})
	msg, _ := first[externalMsg](cmd)
	if m = step(t, m, msg); m.status != "" {
		t.Errorf("the same failure was said again: %q", m.status)
	}
}

// TestExternalAgentActions: the actions that work on Muster's panes by
// name refuse an external row with one line and ask the daemon nothing;
// enter opens the agent through the backend (in a pane running the CLI's
// attach, or the pane that already has it) and attaches to that pane.
func TestExternalAgentActions(t *testing.T) {
	clk := &clock{t: fixtureNow}
	b := &extBackend{fakeBackend: &fakeBackend{sessions: fixtureSessions(), items: fixtureItems()}, ext: []proto.SessionInfo{fixtureAgent()}, pane: "claude-7"}
	m := loadedExt(t, b, 120, 40, clk)
	m.selName = "bg"
	before := len(b.Calls())
	for _, k := range []string{"x", "e", "r", "L", "i", "a", "space"} {
		m = keys(t, m, k)
		if !strings.Contains(m.status, "bg is run by claude agents, not muster; enter opens it in a pane") || strings.Contains(m.status, "\n") {
			t.Errorf("%s on the external row: status %q", k, m.status)
		}
		if m.confirm != "" || m.renameFrom != "" || m.explain != nil || len(m.marks) > 0 || m.busy != "" {
			t.Errorf("%s on the external row started something: confirm %q rename %q explain %v marks %v busy %q", k, m.confirm, m.renameFrom, m.explain, m.marks, m.busy)
		}
		if m.selName != "bg" {
			t.Fatalf("%s moved the cursor to %s", k, m.selName)
		}
	}
	if got := b.Calls()[before:]; len(got) > 0 {
		t.Errorf("the refused actions called the backend: %v", got)
	}

	// Enter opens it and attaches to the pane the backend names.
	m, cmd := apply(t, m, press("enter"))
	if m.Attach() != "" || m.busy == "" {
		t.Fatalf("enter attached before the pane was opened (attach %q, busy %q)", m.Attach(), m.busy)
	}
	msg, ok := first[externalOpenedMsg](cmd)
	if !ok {
		t.Fatal("enter on the external row opened nothing")
	}
	if got := b.Calls(); got[len(got)-1] != "open-external 0b6ecd0a" {
		t.Errorf("calls %v", got)
	}
	done, cmd := apply(t, m, msg)
	if done.Attach() != "claude-7" || cmd == nil {
		t.Errorf("attach %q, want the pane the backend opened", done.Attach())
	}

	// A backend that could not open it: one line, no attach.
	b.openErr = fmt.Errorf("no claude on PATH")
	m, cmd = apply(t, m, externalOpenedMsg{agent: "bg", err: b.openErr})
	if m.Attach() != "" || m.status != "open bg: no claude on PATH" || cmd != nil {
		t.Errorf("a failed open: attach %q, status %q", m.Attach(), m.status)
	}
}

// TestHistoryOpensBackgroundAgent: a conversation from the history tab
// that a background agent runs is opened by joining that agent, never
// resumed as a second agent on it.
func TestHistoryOpensBackgroundAgent(t *testing.T) {
	clk := &clock{t: fixtureNow}
	agent := fixtureAgent()
	b := &extBackend{fakeBackend: &fakeBackend{sessions: fixtureSessions(), history: []HistoryRow{{
		Ref: "claude:" + agent.NativeSessionID, Provider: "claude", ID: agent.NativeSessionID, Title: "background work", Resumable: true, When: fixtureNow,
	}}}, ext: []proto.SessionInfo{agent}, pane: "claude-7"}
	m := loadedExt(t, b, 120, 40, clk)
	m, cmd := apply(t, m, press("h"))
	msg, ok := first[historyMsg](cmd)
	if !ok {
		t.Fatal("no history listing")
	}
	m = step(t, m, msg)
	m, cmd = apply(t, m, press("r"))
	if _, ok := first[externalOpenedMsg](cmd); !ok || m.busy != "opening bg…" {
		t.Fatalf("r on the agent's conversation did not open the agent (busy %q); calls %v", m.busy, b.Calls())
	}
	if got := b.Calls(); slices.ContainsFunc(got, func(c string) bool { return strings.Contains(c, "resume=") }) {
		t.Errorf("the conversation was resumed as a second agent: %v", got)
	}
}
