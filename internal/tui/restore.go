package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// restorePrompt offers the sessions that a daemon restart left restorable,
// each with its reason: enter restores the checked ones, a all of them, esc
// none (they stay in the Restore list, where r and R still work).
type restorePrompt struct {
	sessions []proto.SessionInfo
	checked  []bool
	sel      int
}

// offerRestore opens the prompt for restorable sessions not offered yet:
// after the first refresh, and after the daemon came back.
func (m Model) offerRestore() Model {
	if m.restore != nil || m.dlg != nil {
		return m
	}
	var fresh []proto.SessionInfo
	for _, s := range m.all {
		if s.State == "restorable" && !m.offered[s.ID] {
			fresh = append(fresh, s)
		}
	}
	if len(fresh) == 0 {
		return m
	}
	offered := make(map[string]bool, len(m.offered)+len(fresh))
	for k, v := range m.offered {
		offered[k] = v
	}
	p := &restorePrompt{checked: make([]bool, 0, len(fresh))}
	for _, s := range fresh {
		offered[s.ID] = true
		p.sessions = append(p.sessions, s)
		p.checked = append(p.checked, true)
	}
	m.offered, m.restore = offered, p
	return m
}

func (m Model) restoreKey(k string) (tea.Model, tea.Cmd) {
	p := *m.restore
	p.checked = append([]bool(nil), p.checked...)
	m.restore = &p
	switch k {
	case "j", "down":
		p.sel = min(p.sel+1, len(p.sessions)-1)
	case "k", "up":
		p.sel = max(p.sel-1, 0)
	case "space", " ":
		p.checked[p.sel] = !p.checked[p.sel]
	case "esc", "n", "q":
		m.restore = nil
		m.status, m.statusOK = "nothing restored; r or R restores later", true
	case "a":
		m.restore = nil
		return m.run("resuming all restorable sessions…", resumeCmd(m.ctx, m.backend, nil, true))
	case "enter":
		var names []string
		for i, s := range p.sessions {
			if p.checked[i] {
				names = append(names, s.Name)
			}
		}
		m.restore = nil
		if len(names) == 0 {
			m.status, m.statusOK = "nothing restored; r or R restores later", true
			return m, nil
		}
		return m.run("resuming "+strings.Join(names, ", ")+"…", resumeCmd(m.ctx, m.backend, names, false))
	case "ctrl+c":
		m.quitting = true
		return m, tea.Quit
	}
	return m, nil
}

// Render draws the prompt in w×h cells.
func (p *restorePrompt) Render(w, h int) []string {
	n := 0
	for _, c := range p.checked {
		if c {
			n++
		}
	}
	lines := []string{
		styleBold.Styled(fmt.Sprintf("Restore %s?", plural(len(p.sessions), "session"))) +
			styleFaint.Styled("  their processes ended with the daemon"),
		"",
	}
	nameW := 4
	for _, s := range p.sessions {
		nameW = max(nameW, len([]rune(termtext.Line(s.Name))))
	}
	nameW = min(nameW, 24)
	rows := max(h-5, 1)
	off := window(0, p.sel, rows, len(p.sessions))
	for i := off; i < min(off+rows, len(p.sessions)); i++ {
		s := p.sessions[i]
		mark := "  "
		if i == p.sel {
			mark = styleBold.Styled("▸ ")
		}
		box := "[ ] "
		if p.checked[i] {
			box = styleRestorable.Styled("[✓] ")
		}
		reason := termtext.Line(s.Reason)
		if reason == "" {
			reason = "its process is gone"
		}
		prov := termtext.Line(s.Provider)
		if prov == "" {
			prov = "-"
		}
		lines = append(lines, mark+box+cell(termtext.Line(s.Name), nameW)+gap+cell(prov, 8)+gap+styleFaint.Styled(reason))
	}
	lines = append(lines, "", fmt.Sprintf("enter restores the %d checked · space checks · a restores all · esc restores none", n))
	for i, l := range lines {
		lines[i] = fit(l, w)
	}
	return lines
}
