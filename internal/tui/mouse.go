package tui

import tea "charm.land/bubbletea/v2"

// Mouse: a click selects a session or an attention item, a click on the
// selected session attaches to it, the wheel moves the cursor of the list
// under the pointer.

// hit finds what is drawn at (x, y): a session row, an attention item
// row, or nothing (-1).
func (m Model) hit(x, y int) (f focus, i int) {
	if !m.loaded || m.help || m.dlg != nil || m.explain != nil || m.pvMode() == pvZoom ||
		m.width < minWidth || m.height < minHeight || x >= m.listWidth() {
		return 0, -1
	}
	l := m.layout()
	const top = 2 // the title and filter lines
	if len(m.sessions) == 0 {
		return 0, -1
	}
	shown := min(l.sessionRows, len(m.sessions)-m.sessOff)
	if y > top && y <= top+shown {
		return focusSessions, m.sessOff + y - top - 1
	}
	if len(m.items)+len(m.resolved) == 0 {
		return 0, -1
	}
	first := top + 1 + shown + 2 // a blank line and the drawer's title
	items := min(l.itemRows, len(m.items)-m.itemOff)
	if y >= first && y < first+items {
		return focusAttention, m.itemOff + y - first
	}
	return 0, -1
}

func (m Model) mouse(msg tea.MouseMsg) (tea.Model, tea.Cmd) {
	ev := msg.Mouse()
	f, i := m.hit(ev.X, ev.Y)
	switch msg.(type) {
	case tea.MouseWheelMsg:
		d := 0
		switch ev.Button {
		case tea.MouseWheelUp:
			d = -1
		case tea.MouseWheelDown:
			d = 1
		}
		if m.explain != nil {
			k := map[int]string{-1: "k", 1: "j"}[d]
			return m.explainKey(k)
		}
		if d == 0 || m.help || m.dlg != nil {
			return m, nil
		}
		if i >= 0 {
			m.focus = f
		}
		return m.move(d), nil
	case tea.MouseClickMsg:
		if ev.Button != tea.MouseLeft || i < 0 {
			return m, nil
		}
		m.status = ""
		if f == focusAttention {
			m.focus, m.selItem = focusAttention, m.items[i].ID
			return m.scroll(), nil
		}
		name := m.sessions[i].Name
		if m.focus == focusSessions && name == m.selName {
			return m.enter()
		}
		m.focus, m.selName = focusSessions, name
		return m.scroll(), nil
	}
	return m, nil
}
