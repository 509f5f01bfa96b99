package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// The actions on the selection beyond attach, ack and resume: rename,
// kill of a marked set, and the explain view.

type explainMsg struct {
	name string
	x    proto.Explanation
	err  error
}

// renameKey edits the new name; enter asks the daemon, esc cancels.
func (m Model) renameKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k := msg.String(); k {
	case "esc", "ctrl+c":
		m.renameFrom, m.renameTo = "", ""
		m.status, m.statusOK = "rename cancelled", true
		return m, nil
	case "enter":
		from, to := m.renameFrom, strings.TrimSpace(m.renameTo)
		if to == "" || to == from {
			m.status, m.statusOK = "rename: type a new name, or esc", false
			return m, nil
		}
		m.renameFrom, m.renameTo = "", ""
		ctx, b := m.ctx, m.backend
		m.selName = to // the cursor follows the session once renamed
		return m.run("renaming "+from+"…", func() tea.Msg {
			if err := b.Rename(ctx, from, to); err != nil {
				return actionMsg{err: fmt.Errorf("rename %s: %w", from, err), restore: from}
			}
			return actionMsg{text: "renamed " + from + " to " + to}
		})
	case "backspace", "ctrl+h":
		r := []rune(m.renameTo)
		if len(r) > 0 {
			m.renameTo = string(r[:len(r)-1])
		}
	case "ctrl+u":
		m.renameTo = ""
	default:
		if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
			m.renameTo += msg.Text
		}
	}
	return m, nil
}

// toggleMark marks or unmarks the selected session for a kill of several.
func (m Model) toggleMark() Model {
	s, ok := m.selected()
	if !ok {
		return m
	}
	marks := make(map[string]bool, len(m.marks)+1)
	for k, v := range m.marks {
		marks[k] = v
	}
	if marks[s.Name] {
		delete(marks, s.Name)
	} else {
		marks[s.Name] = true
	}
	m.marks = marks
	return m.move(1)
}

// marked lists the marked sessions that still exist, in display order.
func (m Model) marked() []string {
	var out []string
	for _, s := range m.all {
		if m.marks[s.Name] {
			out = append(out, s.Name)
		}
	}
	return out
}

// autocontinueCmd turns a session's continue after a usage limit on or
// off.
func autocontinueCmd(ctx context.Context, b Backend, name string, on bool) tea.Cmd {
	return func() tea.Msg {
		if err := b.Autocontinue(ctx, name, on); err != nil {
			return actionMsg{err: fmt.Errorf("autocontinue %s: %s", name, errorText(err))}
		}
		if on {
			return actionMsg{text: name + ": muster continues it when its usage limit resets"}
		}
		return actionMsg{text: name + ": no continue at its usage limit's reset"}
	}
}

// killCmd kills names one by one and reports them all.
func (m Model) killCmd(names []string) tea.Cmd {
	ctx, b := m.ctx, m.backend
	return func() tea.Msg {
		var killed, failed []string
		for _, n := range names {
			if err := b.Kill(ctx, n); err != nil {
				failed = append(failed, n+": "+errorText(err))
				continue
			}
			killed = append(killed, n)
		}
		switch {
		case len(failed) > 0 && len(killed) > 0:
			return actionMsg{err: fmt.Errorf("killed %s; not killed: %s", strings.Join(killed, ", "), strings.Join(failed, "; ")), unmark: killed}
		case len(failed) > 0:
			return actionMsg{err: fmt.Errorf("kill %s", strings.Join(failed, "; "))}
		}
		return actionMsg{text: "killed " + strings.Join(killed, ", "), unmark: killed}
	}
}

// openExplain asks the daemon why the selected session is in its state.
func (m Model) openExplain() (tea.Model, tea.Cmd) {
	s, ok := m.target()
	if !ok {
		return m, nil
	}
	if no := refuseExternal("explain", s); no != "" {
		m.status = no
		return m, nil
	}
	ctx, b, name := m.ctx, m.backend, s.Name
	m.explain = &explainView{name: name, loading: true}
	return m, func() tea.Msg {
		x, err := b.Explain(ctx, name)
		return explainMsg{name: name, x: x, err: err}
	}
}

// explainView is the evidence behind a session's run state, as `muster
// explain` prints it.
type explainView struct {
	name    string
	loading bool
	x       proto.Explanation
	err     error
	off     int
}

func (e *explainView) lines() []string {
	line := termtext.Line
	switch {
	case e.loading:
		return []string{styleFaint.Styled("asking the daemon…")}
	case e.err != nil:
		return []string{styleError.Styled(line(errorText(e.err)))}
	}
	x := e.x
	if x.State == nil {
		return []string{line(x.Name) + ": no run state yet (no agent event has arrived for this session)"}
	}
	state := line(*x.State)
	if b, ok := runBadges[proto.RunState(*x.State)]; ok {
		state = b.render()
	}
	if x.Terminal != "" && *x.State != x.Terminal {
		state += " after " + line(x.Terminal)
	}
	out := []string{styleBold.Styled(line(x.Name)) + "  " + state, ""}
	kv := func(k, v string) {
		if v != "" {
			out = append(out, "  "+cell(k, 12)+"  "+line(v))
		}
	}
	kv("run", deref(x.RunID))
	started := deref(x.RunStartedAt)
	if x.ImpliedStart {
		started += " (implied by its first event)"
	}
	kv("started", started)
	kv("ended", deref(x.RunEndedAt))
	kv("idle at", deref(x.IdleAt))
	kv("native id", x.NativeSessionID)
	ev := func(title string, v *proto.Evidence) {
		if v == nil {
			return
		}
		what := v.Kind
		if v.HookName != "" {
			what += " (" + v.HookName + ")"
		}
		kv(title, fmt.Sprintf("%s from %s via %s at %s", what, v.Provider, v.Source, v.OccurredAt))
		if v.Message != "" {
			kv("", "")
			out = append(out, "  "+cell("", 12)+"  "+styleFaint.Styled(line(v.Message)))
		}
	}
	ev("because", x.Because)
	if x.Last != nil && (x.Because == nil || x.Last.EventID != x.Because.EventID) {
		ev("newest", x.Last)
	}
	if len(x.Attention) > 0 {
		out = append(out, "", styleBold.Styled(fmt.Sprintf("Attention (%d)", len(x.Attention))))
		for _, it := range x.Attention {
			out = append(out, fmt.Sprintf("  #%d  %s  %s", it.ID, reasonBadge(it.Reason).render(), line(it.Message)))
		}
	}
	if len(x.Events) > 0 {
		out = append(out, "", styleBold.Styled(fmt.Sprintf("Events (%d)", len(x.Events))))
		for _, r := range slices.Backward(x.Events) {
			what := r.Kind
			if r.HookName != "" {
				what += " (" + r.HookName + ")"
			}
			out = append(out, fmt.Sprintf("  %-6d %-10s %-8s %-30s %s", r.Seq, line(r.Effect), line(r.Source), line(what), line(r.OccurredAt)))
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Render draws the view in w×h cells.
func (e *explainView) Render(w, h int) []string {
	all := e.lines()
	head := styleBold.Styled("Explain ") + termtext.Line(e.name) + styleFaint.Styled("  j/k scroll · esc closes")
	rows := max(h-2, 0)
	off := min(e.off, max(len(all)-rows, 0))
	body := all[off:min(off+rows, len(all))]
	out := append([]string{fit(head, w), ""}, body...)
	for i, l := range out {
		out[i] = fit(l, w)
	}
	return out
}

// explainKey scrolls or closes the explain view.
func (m Model) explainKey(k string) (tea.Model, tea.Cmd) {
	e := *m.explain
	m.explain = &e
	switch k {
	case "esc", "q", "i":
		m.explain = nil
	case "j", "down":
		e.off = min(e.off+1, max(len(e.lines())-1, 0))
	case "k", "up":
		e.off = max(e.off-1, 0)
	case "g", "home":
		e.off = 0
	case "ctrl+c":
		m.quitting = true
		return m, tea.Quit
	}
	return m, nil
}
