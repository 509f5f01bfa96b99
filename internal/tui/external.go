package tui

import (
	"context"
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// ExternalInterval is how long the dashboard waits after one listing of
// the background agents before it asks again: a listing starts the CLI
// (`claude agents --json`, about a second on a loaded 2-core box).
const ExternalInterval = 5 * time.Second

// ExternalSource is a Backend that also lists the agents the CLIs' own
// supervisors run (Claude Code's `claude --bg`): rows marked External,
// shown beside the panes. Muster does not own them, so the actions that
// work by session name refuse them; enter opens one in a pane.
type ExternalSource interface {
	// External lists the agents, leaving out those the panes (the
	// sessions as last pushed) already run. It may start a program: the
	// dashboard calls it off the UI loop, one call at a time, at most
	// every ExternalInterval.
	External(ctx context.Context, panes []proto.SessionInfo) ([]proto.SessionInfo, error)
	// OpenExternal returns the live pane that runs the agent, opening one
	// with the CLI's own attach when none does, so that one conversation
	// has one pane and one agent.
	OpenExternal(ctx context.Context, agent proto.SessionInfo) (name string, err error)
}

type (
	externalMsg struct {
		rows []proto.SessionInfo
		err  error
		at   time.Time
	}
	externalOpenedMsg struct {
		agent string
		name  string
		err   error
	}
)

// pollExternal asks for the background agents when the backend lists
// them, none is being asked for, and the last answer is ExternalInterval
// old.
func (m Model) pollExternal() (Model, tea.Cmd) {
	src, ok := m.backend.(ExternalSource)
	if !ok || m.extBusy || !m.loaded || m.err != nil {
		return m, nil
	}
	if !m.extAt.IsZero() && m.nowFn().Sub(m.extAt) < ExternalInterval {
		return m, nil
	}
	m.extBusy = true
	ctx, panes, now := m.ctx, m.rawSessions, m.nowFn
	return m, func() tea.Msg {
		rows, err := src.External(ctx, panes)
		return externalMsg{rows: rows, err: err, at: now()}
	}
}

// applyExternal shows a listing. A supervisor that fails is said once in
// the status line, not at every listing.
func (m Model) applyExternal(msg externalMsg) Model {
	m.extBusy, m.extAt = false, msg.at
	m.ext = msg.rows
	if msg.err == nil {
		m.extErr = ""
	} else if text := "background agents: " + termtext.Line(errorText(msg.err)); text != m.extErr {
		m.extErr = text
		m.status, m.statusOK = text, false
	}
	return m.resort()
}

// resort rebuilds the list from the panes as last pushed and the
// background agents as last listed.
func (m Model) resort() Model {
	oldSess, oldItem := m.selIndex(), m.itemIndex()
	m.all = sortSessions(slices.Concat(m.rawSessions, m.ext), m.byDir)
	m.sessions = m.filtered()
	return m.clamp(oldSess, oldItem)
}

// openExternal opens a background agent in a pane, or finds the pane
// that has it, and attaches.
func (m Model) openExternal(s proto.SessionInfo) (tea.Model, tea.Cmd) {
	src, ok := m.backend.(ExternalSource)
	if !ok {
		m.status = s.Name + " is run by " + externalBy(s) + ", not muster"
		return m, nil
	}
	ctx, agent := m.ctx, s
	return m.run("opening "+s.Name+"…", func() tea.Msg {
		name, err := src.OpenExternal(ctx, agent)
		return externalOpenedMsg{agent: agent.Name, name: name, err: err}
	})
}

// refuseExternal is the one line for an action that works on Muster's
// panes only, when s is an agent another supervisor runs; "" for a pane.
func refuseExternal(action string, s proto.SessionInfo) string {
	if s.External == nil {
		return ""
	}
	return fmt.Sprintf("%s: %s is run by %s, not muster; enter opens it in a pane", action, termtext.Line(s.Name), externalBy(s))
}

func externalBy(s proto.SessionInfo) string {
	if s.External != nil && s.External.Supervisor != "" {
		return termtext.Line(s.External.Supervisor)
	}
	return "its CLI"
}
