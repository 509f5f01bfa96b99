package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/musterhq/muster/internal/proto"
)

// ResolvedFor is how long a resolved attention item stays in the drawer,
// greyed.
const ResolvedFor = 24 * time.Hour

// group orders the session list: what needs the user, then what works,
// then the other live sessions, then the agents other supervisors run
// (ExternalSource), then exited and restorable ones at the bottom.
type group int

const (
	groupNeedsYou group = iota
	groupWorking
	groupLive
	groupExternal
	groupExited
	groupRestorable
)

func sessionGroup(s proto.SessionInfo) group {
	switch s.State {
	case "restorable":
		return groupRestorable
	case proto.PaneExternal:
		return groupExternal
	case "running":
	default:
		return groupExited
	}
	switch {
	case needsYou(s):
		return groupNeedsYou
	case s.RunState != nil && proto.RunState(*s.RunState) == proto.StateRunning,
		s.RunState == nil && s.Activity == "working":
		return groupWorking
	}
	return groupLive
}

// needsYou reports whether a live session waits on the user: a question,
// an approval, or an open attention item.
func needsYou(s proto.SessionInfo) bool {
	if s.State != "running" {
		return false
	}
	if s.RunState != nil {
		switch proto.RunState(*s.RunState) {
		case proto.StateWaitingApproval, proto.StateWaitingInput:
			return true
		}
	}
	return s.Attention > 0
}

// sortSessions orders sessions by group, keeping the daemon's order (by
// creation) within a group. byDir first gathers the live sessions by
// directory, the directory of the session that needs the user most coming
// first, so that a project's agents sit together; exited and restorable
// sessions stay at the bottom either way.
func sortSessions(in []proto.SessionInfo, byDir bool) []proto.SessionInfo {
	out := slices.Clone(in)
	if !byDir {
		slices.SortStableFunc(out, func(a, b proto.SessionInfo) int {
			return cmp.Compare(sessionGroup(a), sessionGroup(b))
		})
		return out
	}
	// A directory ranks by its most urgent live session, then by its
	// first one in the daemon's order.
	rank := map[string]group{}
	first := map[string]int{}
	for i, s := range out {
		g := sessionGroup(s)
		if g >= groupExited {
			continue
		}
		if r, ok := rank[s.CWD]; !ok || g < r {
			rank[s.CWD] = g
		}
		if _, ok := first[s.CWD]; !ok {
			first[s.CWD] = i
		}
	}
	slices.SortStableFunc(out, func(a, b proto.SessionInfo) int {
		ga, gb := sessionGroup(a), sessionGroup(b)
		if la, lb := ga < groupExited, gb < groupExited; la != lb || !la {
			return cmp.Compare(ga, gb)
		}
		return cmp.Or(cmp.Compare(rank[a.CWD], rank[b.CWD]), cmp.Compare(first[a.CWD], first[b.CWD]), cmp.Compare(ga, gb))
	})
	return out
}

// folded reports whether s is hidden by the fold: an exited or restorable
// session while the user folded them away.
func (m Model) folded(s proto.SessionInfo) bool {
	return m.fold && sessionGroup(s) >= groupExited
}

// foldedCount is how many sessions the fold hides.
func (m Model) foldedCount() int {
	n := 0
	for _, s := range m.all {
		if m.folded(s) && (strings.TrimSpace(m.filter) == "" || m.matches(s)) {
			n++
		}
	}
	return n
}

// splitItems separates open items from those resolved within ResolvedFor
// of now; older resolved items are dropped.
func splitItems(items []proto.AttentionItem, now time.Time) (open, resolved []proto.AttentionItem) {
	for _, it := range items {
		if it.Open {
			open = append(open, it)
			continue
		}
		if it.ResolvedAt == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, *it.ResolvedAt)
		if err != nil || now.Sub(at) > ResolvedFor {
			continue
		}
		resolved = append(resolved, it)
	}
	slices.SortStableFunc(resolved, func(a, b proto.AttentionItem) int {
		return -cmp.Compare(*a.ResolvedAt, *b.ResolvedAt)
	})
	return open, resolved
}

// matches reports whether a session passes the filter: every word of it
// appears in the name, the directory or the provider, ignoring case.
func (m Model) matches(s proto.SessionInfo) bool {
	hay := strings.ToLower(s.Name + "\x00" + s.CWD + "\x00" + tilde(s.CWD, m.home) + "\x00" + s.Provider)
	for _, w := range strings.Fields(strings.ToLower(m.filter)) {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// filtered is the sessions the filter and the fold let through.
func (m Model) filtered() []proto.SessionInfo {
	if strings.TrimSpace(m.filter) == "" && !m.fold {
		return m.all
	}
	var out []proto.SessionInfo
	for _, s := range m.all {
		if !m.folded(s) && m.matches(s) {
			out = append(out, s)
		}
	}
	return out
}

// setFilter changes the filter and keeps the cursor on a visible row.
func (m Model) setFilter(f string) Model {
	old := m.selIndex()
	m.filter = f
	if f == "" {
		m.filtering = false
	}
	m.sessions = m.filtered()
	return m.clamp(old, m.itemIndex())
}

// filterKey edits the filter: text adds to it, backspace takes from it,
// enter keeps it, esc clears it. The arrows still move the cursor.
func (m Model) filterKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k := msg.String(); k {
	case "esc":
		return m.setFilter(""), nil
	case "enter":
		m.filtering = false
		return m, nil
	case "ctrl+c":
		return m, tea.Quit
	case "backspace", "ctrl+h":
		r := []rune(m.filter)
		if len(r) == 0 {
			m.filtering = false
			return m, nil
		}
		m = m.setFilter(string(r[:len(r)-1]))
		m.filtering = true
		return m, nil
	case "ctrl+u":
		m = m.setFilter("")
		m.filtering = true
		return m, nil
	case "down":
		return m.move(1), nil
	case "up":
		return m.move(-1), nil
	}
	if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
		m = m.setFilter(m.filter + msg.Text)
		m.filtering = true
	}
	return m, nil
}

// nextNeedy moves the cursor to the next session that needs the user,
// after the selected one, wrapping around.
func (m Model) nextNeedy() Model {
	n := len(m.sessions)
	if n == 0 {
		return m
	}
	from := m.selIndex()
	for i := 1; i <= n; i++ {
		s := m.sessions[(from+i)%n]
		if needsYou(s) {
			m.selName, m.focus = s.Name, focusSessions
			return m.scroll()
		}
	}
	m.status, m.statusOK = "no session needs you", true
	return m
}

// toggleFold folds the exited and restorable sessions away, or shows
// them again.
func (m Model) toggleFold() Model {
	old := m.selIndex()
	m.fold = !m.fold
	m.sessions = m.filtered()
	m = m.clamp(old, m.itemIndex())
	if m.fold {
		m.status, m.statusOK = fmt.Sprintf("%s folded; f shows them", plural(m.foldedCount(), "exited or restorable session")), true
	} else {
		m.status, m.statusOK = "exited and restorable sessions shown", true
	}
	return m
}

// toggleByDir groups the live sessions by directory, or goes back to the
// order by state alone.
func (m Model) toggleByDir() Model {
	m.byDir = !m.byDir
	m.all = sortSessions(slices.Concat(m.rawSessions, m.ext), m.byDir)
	m.sessions = m.filtered()
	m = m.scroll()
	if m.byDir {
		m.status, m.statusOK = "grouped by directory; d groups by state", true
	} else {
		m.status, m.statusOK = "grouped by state; d groups by directory", true
	}
	return m
}
