package tui

import (
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/musterhq/muster/internal/proto"
)

// WatchStream is an open op "watch": the daemon pushes the sessions and
// the attention drawer when they change. Next blocks until the next push
// and fails once the stream broke (the daemon went away); Close ends it
// and wakes a blocked Next.
type WatchStream interface {
	Next() (proto.WatchUpdate, error)
	Close() error
}

type (
	watchOpenedMsg struct {
		seq    int
		stream WatchStream
		first  proto.WatchUpdate
		err    error
		at     time.Time
	}
	watchMsg struct {
		seq int
		upd proto.WatchUpdate
		err error
		at  time.Time
	}
	// redialMsg opens the watch again after the daemon went away.
	redialMsg struct{ seq int }
)

// openWatchCmd opens the watch stream numbered seq.
func (m Model) openWatchCmd(seq int) tea.Cmd {
	ctx, b, now := m.ctx, m.backend, m.nowFn
	return func() tea.Msg {
		first, st, err := b.Watch(ctx)
		return watchOpenedMsg{seq: seq, stream: st, first: first, err: err, at: now()}
	}
}

func nextWatchCmd(seq int, st WatchStream, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		u, err := st.Next()
		return watchMsg{seq: seq, upd: u, err: err, at: now()}
	}
}

// updateWatch applies what the watch stream says: a push is shown, a
// broken stream marks the daemon away and dials again after
// RedialInterval; a new daemon's first push is the whole truth again.
func (m Model) updateWatch(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case watchOpenedMsg:
		if msg.seq != m.watchSeq+1 || m.watch != nil {
			return m, closeWatchCmd(msg.stream)
		}
		m.watchSeq = msg.seq
		if msg.err != nil {
			return m.away(msg.err, msg.at)
		}
		m.watch = msg.stream
		m = m.apply(msg.first, msg.at)
		m, ext := m.pollExternal()
		cmds := []tea.Cmd{nextWatchCmd(m.watchSeq, m.watch, m.nowFn), ext}
		if !m.ticking {
			m.ticking = true
			cmds = append(cmds, tea.Tick(ClockInterval, func(time.Time) tea.Msg { return clockMsg{} }))
		}
		return m, tea.Batch(cmds...)
	case watchMsg:
		if msg.seq != m.watchSeq || m.watch == nil {
			return m, nil
		}
		if msg.err != nil {
			st := m.watch
			m.watch = nil
			m, cmd := m.away(msg.err, msg.at)
			return m, tea.Batch(closeWatchCmd(st), cmd)
		}
		ring := m.bell && opensItem(m.rawItems, msg.upd.Attention)
		m = m.apply(msg.upd, msg.at)
		next := nextWatchCmd(m.watchSeq, m.watch, m.nowFn)
		if ring {
			// The person may be looking at another window: the bell
			// reaches them there (tmux marks the window, a terminal its
			// tab).
			return m, tea.Batch(next, tea.Raw("\a"))
		}
		return m, next
	case redialMsg:
		if msg.seq != m.watchSeq || m.watch != nil {
			return m, nil
		}
		return m, m.openWatchCmd(m.watchSeq + 1)
	}
	return m, nil
}

// opensItem reports whether a pushed drawer has an open item newer than
// every item of the drawer before it; nil is a drawer that did not change.
func opensItem(before, pushed []proto.AttentionItem) bool {
	var newest int64
	for _, it := range before {
		newest = max(newest, it.ID)
	}
	for _, it := range pushed {
		if it.Open && it.ID > newest {
			return true
		}
	}
	return false
}

// away records that the daemon stopped answering and schedules the next
// attempt to reach it.
func (m Model) away(err error, at time.Time) (Model, tea.Cmd) {
	if m.err == nil {
		m.awaySince = at
	}
	m.err, m.now = err, at
	seq := m.watchSeq
	return m, tea.Tick(RedialInterval, func(time.Time) tea.Msg { return redialMsg{seq: seq} })
}

// apply shows one push. A list the push leaves out did not change.
func (m Model) apply(u proto.WatchUpdate, at time.Time) Model {
	if m.err != nil && m.loaded {
		m.status, m.statusOK = "reconnected to the daemon", true
	}
	m.err = nil
	oldSess, oldItem := m.selIndex(), m.itemIndex()
	m.loaded = true
	m.now = at
	m.hosts = m.hostsNow()
	if u.Sessions != nil {
		m.rawSessions = u.Sessions
		m.all = sortSessions(slices.Concat(u.Sessions, m.ext), m.byDir)
	}
	if u.Attention != nil {
		m.rawItems = u.Attention
	}
	m.items, m.resolved = splitItems(m.rawItems, at)
	m.sessions = m.filtered()
	m = m.clamp(oldSess, oldItem)
	return m.offerRestore()
}

func closeWatchCmd(st WatchStream) tea.Cmd {
	if st == nil {
		return nil
	}
	return func() tea.Msg {
		st.Close()
		return nil
	}
}
