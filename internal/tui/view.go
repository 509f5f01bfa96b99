package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/proccost"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// View draws the whole screen: exactly height lines of at most width
// columns, so that the help line stays at the bottom.
func (m Model) View() tea.View {
	content := m.render()
	if m.noColor {
		content = ansi.Strip(content)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	return v
}

// layout is how many rows each list gets at the current size.
type layout struct {
	sessionRows int
	itemRows    int
	restoreRows int
}

// Fixed lines: the title bar and the filter line under it, the status
// line and the help line.
const chromeLines = 4

// The smallest screen the dashboard draws; below it, it says so.
const minWidth, minHeight = 40, 10

func (m Model) layout() layout {
	restorable := m.countState("restorable")
	avail := m.listHeight() - 1 // the table header
	if len(m.items)+len(m.resolved) > 0 {
		avail -= 2 // a blank line and the section title
	}
	if restorable > 0 {
		avail -= 2
	}
	if m.foldedCount() > 0 {
		avail-- // the folded sessions' line
	}
	s, a, r := max(len(m.sessions), 1), len(m.items)+len(m.resolved), restorable
	if s+a+r <= avail {
		return layout{s, a, r}
	}
	// Too many rows: the drawer and the restore list get a share each, the
	// sessions the rest, and whatever the sessions leave goes back to them.
	a2, r2 := min(a, max(1, avail/4)), min(r, max(1, avail/5))
	s2 := max(1, min(s, avail-a2-r2))
	left := max(0, avail-s2-a2-r2)
	more := min(left, a-a2)
	a2 += more
	r2 += min(left-more, r-r2)
	return layout{s2, a2, r2}
}

// pvLayout is where the preview box goes.
type pvLayout int

const (
	pvHidden pvLayout = iota
	pvSide            // right of the lists
	pvUnder           // under the lists
	pvZoom            // instead of the lists
)

// Where the preview goes by itself: beside the lists on a wide screen,
// under them on a tall one.
const pvSideWidth, pvUnderHeight = 140, 36

func (m Model) pvMode() pvLayout {
	switch {
	case m.help || m.dlg != nil || m.explain != nil || m.restore != nil || m.tab == tabHistory || m.width < minWidth || m.height < minHeight:
		return pvHidden
	case m.zoom:
		return pvZoom
	case m.pvPref == pvOff:
		return pvHidden
	case m.width >= pvSideWidth:
		return pvSide
	case m.height >= pvUnderHeight || m.pvPref == pvOn:
		return pvUnder
	}
	return pvHidden
}

// bodyHeight is the rows between the title and filter lines and the
// status and help lines.
func (m Model) bodyHeight() int { return max(m.height-chromeLines, 0) }

// pvSize is the preview box's size in its layout.
func (m Model) pvSize() (w, h int) {
	switch m.pvMode() {
	case pvSide:
		return max(m.width*2/5, 40), m.bodyHeight()
	case pvUnder:
		return m.width, max(m.bodyHeight()*2/5, 4)
	case pvZoom:
		return m.width, m.bodyHeight()
	}
	return 0, 0
}

// listWidth and listHeight are the room left to the lists.
func (m Model) listWidth() int {
	if m.pvMode() == pvSide {
		w, _ := m.pvSize()
		return m.width - w - 1
	}
	return m.width
}

func (m Model) listHeight() int {
	switch m.pvMode() {
	case pvUnder:
		_, h := m.pvSize()
		return m.bodyHeight() - h - 1
	case pvZoom:
		return 0
	}
	return m.bodyHeight()
}

func (m Model) render() string {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if w < minWidth || h < minHeight {
		return m.tooSmall()
	}
	l := m.layout()
	title := titleBar{sessions: m.all, items: m.items, loaded: m.loaded}.Render(w)
	if m.err != nil && m.loaded {
		away := ""
		if d := m.now.Sub(m.awaySince); d >= time.Second {
			away = " for " + age(m.awaySince.Format(time.RFC3339Nano), m.now)
		}
		title = fit(styleTitle.Styled(" muster ")+"  "+styleError.Styled("daemon away"+away+" · reconnecting…"), w)
	}
	if m.tab == tabHistory && m.err == nil {
		title = fit(styleTitle.Styled(" muster ")+"  "+styleBold.Styled("History")+styleFaint.Styled("  of the conversations agents left on disk · h returns to the sessions"), w)
	}
	head := []string{title, m.filterLine(w)}
	var body []string
	mode := m.pvMode()
	switch {
	case m.help:
		body = strings.Split(helpPage{detachKey: m.detachKey}.Render(w), "\n")
	case m.restore != nil:
		body = m.restore.Render(w, m.bodyHeight())
	case m.tab == tabHistory && m.hist != nil:
		body = m.renderHistory(w, m.bodyHeight())
	case m.dlg != nil:
		body = m.dlg.Render(w, m.bodyHeight())
	case m.explain != nil:
		body = m.explain.Render(w, m.bodyHeight())
	case mode == pvZoom:
		pw, ph := m.pvSize()
		body = previewBox{pv: m.pv, w: pw, h: ph, note: m.previewNote()}.Render()
	default:
		lw, lh := m.listWidth(), m.listHeight()
		body = m.lists(lw, l)
		if len(body) > lh {
			body = body[:lh]
		}
		pw, ph := m.pvSize()
		switch mode {
		case pvSide:
			box := previewBox{pv: m.pv, w: pw, h: ph, note: m.previewNote()}.Render()
			for len(body) < len(box) {
				body = append(body, "")
			}
			sep := styleFaint.Styled("│")
			for i := range body {
				body[i] = cell(fit(body[i], lw), lw) + sep + box[i]
			}
		case pvUnder:
			for len(body) < lh {
				body = append(body, "")
			}
			body = append(append(body, ""), previewBox{pv: m.pv, w: pw, h: ph, note: m.previewNote()}.Render()...)
		}
	}
	lines := append(head, body...)
	room := max(h-2, 0)
	if len(lines) > room {
		lines = lines[:room]
	}
	for len(lines) < room {
		lines = append(lines, "")
	}
	lines = append(lines, m.statusLine(w), helpLine{focus: m.focus, help: m.help, zoom: m.pvMode() == pvZoom, dialog: m.dlg != nil, explain: m.explain != nil, restore: m.restore != nil, history: m.tab == tabHistory && m.tview == nil, transcript: m.tab == tabHistory && m.tview != nil, filtering: m.filtering}.Render(w))
	if len(lines) > h {
		lines = lines[len(lines)-h:]
	}
	for i, ln := range lines {
		lines[i] = fit(ln, w)
	}
	return strings.Join(lines, "\n")
}

// lists are the session table, the attention drawer and the restore
// list, as lines of at most w columns.
func (m Model) lists(w int, l layout) []string {
	body := []string{sessionTable{
		loaded: m.loaded, sessions: m.sessions, sel: m.selIndex(), off: m.sessOff,
		rows: l.sessionRows, focused: m.focus == focusSessions, now: m.now, home: m.home,
		stale: m.err != nil, filtered: m.filter != "", marks: m.marks,
		folded: m.foldedCount(), byDir: m.byDir, hosts: hostIndex(m.hosts), hostsNote: hostsNote(m.hosts, m.now),
	}.Render(w)}
	if len(m.items)+len(m.resolved) > 0 {
		body = append(body, "", drawer{
			items: m.items, resolved: m.resolved, sel: m.itemIndex(), off: m.itemOff, rows: l.itemRows,
			focused: m.focus == focusAttention, now: m.now,
		}.Render(w))
	}
	if l.restoreRows > 0 {
		var rs []proto.SessionInfo
		for _, s := range m.all {
			if s.State == "restorable" {
				rs = append(rs, s)
			}
		}
		body = append(body, "", restoreList{sessions: rs, rows: l.restoreRows}.Render(w))
	}
	return strings.Split(strings.Join(body, "\n"), "\n")
}

// tooSmall is the whole frame on a screen smaller than the dashboard
// needs.
func (m Model) tooSmall() string {
	msg := []string{
		"Terminal too small",
		fmt.Sprintf("%d×%d; need %d×%d", m.width, m.height, minWidth, minHeight),
		"q quits",
	}
	lines := make([]string, m.height)
	top := max(0, (m.height-len(msg))/2)
	for i, t := range msg {
		if top+i < m.height {
			t = fit(t, m.width)
			pad := max(0, (m.width-ansi.StringWidth(t))/2)
			lines[top+i] = strings.Repeat(" ", pad) + t
		}
	}
	if m.height == 1 {
		lines[0] = fit("too small", m.width)
	}
	return strings.Join(lines, "\n")
}

// filterLine is the line under the title: the filter while it is typed or
// set, blank otherwise.
func (m Model) filterLine(w int) string {
	if !m.filtering && m.filter == "" {
		return ""
	}
	cursor := ""
	if m.filtering {
		cursor = "▏"
	}
	count := styleFaint.Styled(fmt.Sprintf("  %d of %d", len(m.sessions), len(m.all)))
	return fit(styleBold.Styled("/")+" "+termtext.Line(m.filter)+cursor+count, w)
}

func (m Model) statusLine(w int) string {
	switch {
	case m.renameFrom != "":
		return fit(styleBold.Styled("rename "+termtext.Line(m.renameFrom)+" to: ")+termtext.Line(m.renameTo)+"▏"+styleFaint.Styled("  enter renames · esc cancels"), w)
	case m.confirmMany != nil:
		return styleConfirm.Styled(fit(fmt.Sprintf("kill %s (%s) and remove them? y/n", plural(len(m.confirmMany), "marked session"), termtext.Line(strings.Join(m.confirmMany, ", "))), w))
	case m.confirmAll:
		return styleConfirm.Styled(fit(fmt.Sprintf("acknowledge all %s? y/n", plural(len(m.items), "open item")), w))
	case m.confirm != "":
		return styleConfirm.Styled(fit("kill "+termtext.Line(m.confirm)+" and remove the session? y/n", w))
	case m.busy != "":
		return styleFaint.Styled(fit(termtext.Line(m.busy), w))
	case m.status != "" && m.statusOK:
		return fit(termtext.Line(m.status), w)
	case m.status != "":
		return styleError.Styled(fit(termtext.Line(m.status), w))
	case m.err != nil:
		return styleError.Styled(fit("cannot reach the daemon: "+termtext.Line(errorText(m.err)), w))
	}
	return ""
}

// titleBar is the top line: the program's name and a summary of what needs
// the user.
type titleBar struct {
	sessions []proto.SessionInfo
	items    []proto.AttentionItem
	loaded   bool
}

func (t titleBar) Render(w int) string {
	out := styleTitle.Styled(" muster ")
	if !t.loaded {
		return fit(out, w)
	}
	live, waiting, restorable, external := 0, 0, 0, 0
	for _, s := range t.sessions {
		switch s.State {
		case proto.PaneExternal:
			external++
		case "running":
			live++
			if s.RunState != nil && (*s.RunState == string(proto.StateWaitingInput) || *s.RunState == string(proto.StateWaitingApproval)) {
				waiting++
			}
		case "restorable":
			restorable++
		}
	}
	parts := []string{plural(len(t.sessions)-external, "session"), fmt.Sprintf("%d live", live)}
	if external > 0 {
		parts = append(parts, fmt.Sprintf("%d external", external))
	}
	if waiting > 0 {
		parts = append(parts, styleInput.Styled(fmt.Sprintf("%d waiting", waiting)))
	}
	if len(t.items) > 0 {
		parts = append(parts, styleAttention.Styled(fmt.Sprintf("%d need you", len(t.items))))
	}
	if restorable > 0 {
		parts = append(parts, styleRestorable.Styled(fmt.Sprintf("%d to restore", restorable)))
	}
	if total := costTotal(t.sessions); total != "" {
		parts = append(parts, total)
	}
	return fit(out+"  "+strings.Join(parts, " · "), w)
}

// sessionTable is the session list with its column header.
type sessionTable struct {
	loaded   bool
	sessions []proto.SessionInfo
	sel, off int
	rows     int
	focused  bool
	now      time.Time
	home     string
	stale    bool // the daemon is away: the states may be wrong
	filtered bool
	marks    map[string]bool
	folded   int  // exited and restorable sessions folded away
	byDir    bool // grouped by directory: a directory shows on its first row only
	// hosts, when there are any, adds a HOST column; the sessions of a
	// host that is not connected are dimmed at their last known state,
	// and hostsNote says which hosts those are.
	hosts     map[string]HostState
	hostsNote string
}

// Fixed column widths; NAME and PROVIDER follow their content within
// bounds, and CWD takes what is left.
const (
	stateCol = 17 // "▲ waitingApproval"
	attnCol  = 3  // "!12"
	actCol   = 12 // "working 100%"
	ctxCol   = 9  // "100% left", "999k used"
	costCol  = 10 // "1.2G! 100%"
	ageCol   = 4
	gap      = "  "
)

func (t sessionTable) Render(w int) string {
	if !t.loaded {
		return styleFaint.Styled("  loading…")
	}
	foldLine := ""
	if t.folded > 0 {
		foldLine = "\n" + styleFaint.Styled(fmt.Sprintf("  ⋯ %s folded · f shows them", plural(t.folded, "exited or restorable session")))
	}
	if len(t.sessions) == 0 {
		if t.folded > 0 {
			return "  No live session." + foldLine
		}
		if t.filtered {
			return "  No session matches the filter; esc clears it."
		}
		return "  No sessions yet. Press c to start one (an agent, a shell or a command)."
	}
	nameW, provW, modelW, hostW := 4, 8, 0, 0
	if t.hosts != nil {
		hostW = 4
	}
	anyCost := false
	for _, s := range t.sessions {
		anyCost = anyCost || s.RSSBytes != nil
		h, bare := t.name(s.Name)
		hostW = max(hostW, ansi.StringWidth(termtext.Line(h)))
		nameW = max(nameW, ansi.StringWidth(termtext.Line(bare)))
		provW = max(provW, ansi.StringWidth(termtext.Line(s.Provider)))
		if s.Model != "" || s.ContextTokens > 0 {
			modelW = max(modelW, len("MODEL"), ansi.StringWidth(termtext.Line(s.Model)))
		}
	}
	nameW, provW, modelW, hostW = min(nameW, 24), min(provW, 10), min(modelW, 20), min(hostW, 16)
	// Narrow screens drop the columns that matter least, the model and
	// context first; no session reporting either shows neither.
	showProv, showAct, showModel := w >= 60, w >= 100, w >= 120 && modelW > 0
	showCost := w >= 90 && anyCost
	if hostW > 0 {
		hostW += len(gap)
	}
	fixed := 2 + hostW + nameW + len(gap) + stateCol + len(gap) + attnCol + len(gap) + ageCol + len(gap)
	if showCost {
		fixed += costCol + len(gap)
	}
	if showProv {
		fixed += provW + len(gap)
	}
	if showAct {
		fixed += actCol + len(gap)
	}
	if showModel {
		fixed += modelW + len(gap) + ctxCol + len(gap)
	}
	cwdW := max(w-fixed, 3)
	row := func(mark, host, name, prov, state, attn, act, model, ctx, cost, age, cwd string) string {
		out := mark
		if hostW > 0 {
			out += cell(host, hostW-len(gap)) + gap
		}
		out += cell(name, nameW) + gap
		if showProv {
			out += cell(prov, provW) + gap
		}
		out += cell(state, stateCol) + gap + cell(attn, attnCol) + gap
		if showAct {
			out += cell(act, actCol) + gap
		}
		if showModel {
			out += cell(model, modelW) + gap + cell(ctx, ctxCol) + gap
		}
		if showCost {
			out += cell(cost, costCol) + gap
		}
		return out + cell(age, ageCol) + gap + cellLeft(cwd, cwdW)
	}
	lines := []string{styleFaint.Styled(strings.TrimRight(row("  ", "HOST", "NAME", "PROVIDER", "STATUS", "!", "ACTIVITY", "MODEL", "CONTEXT", "MEM  CPU", "AGE", "DIRECTORY"), " "))}
	end := min(t.off+t.rows, len(t.sessions))
	for i := t.off; i < end; i++ {
		s := t.sessions[i]
		host, bare := t.name(s.Name)
		mark, name := "  ", termtext.Line(bare)
		if i == t.sel {
			if t.focused {
				mark, name = styleBold.Styled("▸ "), styleBold.Styled(cell(name, nameW))
			} else {
				mark = styleFaint.Styled("› ")
			}
		}
		if t.marks[s.Name] {
			if i == t.sel && t.focused {
				mark = styleBold.Styled("▸") + styleConfirm.Styled("✓")
			} else {
				mark = " " + styleConfirm.Styled("✓")
			}
		}
		attn := ""
		if s.Attention > 0 {
			attn = styleAttention.Styled(fmt.Sprintf("!%d", s.Attention))
		}
		prov := termtext.Line(s.Provider)
		if prov == "" {
			prov = "-"
		}
		act := termtext.Line(s.Activity)
		if x := s.External; x != nil {
			act = termtext.Line(x.State)
		}
		if act == "" {
			act = "-"
		} else if s.ActivityPercent != nil {
			act += fmt.Sprintf(" %d%%", *s.ActivityPercent)
		}
		state := sessionBadge(s).render()
		if t.stale && s.State == "running" {
			state = styleQuiet.Styled("? unknown")
		}
		dir := tilde(termtext.Line(s.CWD), t.home)
		if w := s.Worktree; w != nil {
			dir = worktreeMark(w) + " " + dir
		}
		if t.byDir && i > t.off && t.sessions[i-1].CWD == s.CWD && sessionGroup(s) < groupExited {
			dir = styleFaint.Styled("〃")
		}
		if host == "" && t.hosts != nil {
			host = "-"
		}
		line := row(mark, termtext.Line(host), name, prov, state, attn, act, termtext.Line(s.Model), contextLeft(s), costCell(s), createdAge(s, t.now), dir)
		line = strings.TrimRight(line, " ")
		if s.State != "running" && s.External == nil || t.stale || hostDown(t.hosts, s.Name) {
			line = styleFaint.Styled(line)
		}
		lines = append(lines, line)
	}
	if hidden := len(t.sessions) - (end - t.off); hidden > 0 && t.rows > 0 {
		lines[0] += styleFaint.Styled(fmt.Sprintf("   (%d–%d of %d)", t.off+1, end, len(t.sessions)))
	}
	if t.byDir {
		lines[0] += styleFaint.Styled("   by directory")
	}
	if t.hostsNote != "" {
		lines = append(lines, "  "+styleError.Styled(t.hostsNote))
	}
	return strings.Join(lines, "\n") + foldLine
}

// name splits a row's session name into its host and its own name when
// the table shows hosts.
func (t sessionTable) name(full string) (host, bare string) {
	if t.hosts == nil {
		return "", full
	}
	return splitHost(full)
}

// worktreeMark is the branch of a session's own worktree
// (proto.WorktreeInfo.BranchMark).
func worktreeMark(w *proto.WorktreeInfo) string {
	return "⎇ " + termtext.Line(w.BranchMark())
}

// costCell is a session's memory (its process tree's RSS, "!" over its
// ceiling, in the attention colour) and CPU share of one core.
func costCell(s proto.SessionInfo) string {
	if s.RSSBytes == nil {
		return ""
	}
	mem := proccost.FormatBytes(*s.RSSBytes)
	over := s.MemoryCeiling > 0 && *s.RSSBytes > s.MemoryCeiling
	if over {
		mem += "!"
	}
	out := fmt.Sprintf("%-5s", mem)
	if s.CPUPercent != nil {
		out += fmt.Sprintf(" %3.0f%%", *s.CPUPercent)
	}
	if over {
		return styleAttention.Styled(out)
	}
	return out
}

// costTotal is what every live pane costs together: their trees' RSS and
// CPU summed ("" while no sample is in).
func costTotal(sessions []proto.SessionInfo) string {
	var rss int64
	var cpu float64
	sampled := false
	for _, s := range sessions {
		if s.RSSBytes != nil {
			rss += *s.RSSBytes
			sampled = true
		}
		if s.CPUPercent != nil {
			cpu += *s.CPUPercent
		}
	}
	if !sampled {
		return ""
	}
	return fmt.Sprintf("agents %s, %.0f%% CPU", proccost.FormatBytes(rss), cpu)
}

// drawer is the attention drawer: open items, oldest first.
type drawer struct {
	items    []proto.AttentionItem
	resolved []proto.AttentionItem
	sel, off int
	rows     int
	focused  bool
	now      time.Time
}

const reasonCol = 20 // "▲ approval-requested"

func (d drawer) Render(w int) string {
	title := fmt.Sprintf("Attention (%d)", len(d.items))
	if len(d.resolved) > 0 {
		title += fmt.Sprintf(" · %d resolved today", len(d.resolved))
	}
	if d.focused {
		title = styleBold.Styled(title) + styleFaint.Styled("  a acknowledges · enter attaches · tab returns")
	} else {
		title = styleBold.Styled(title) + styleFaint.Styled("  tab to select")
	}
	lines := []string{title}
	idW, nameW := 2, 4
	for _, it := range append(slices.Clone(d.items), d.resolved...) {
		idW = max(idW, len(fmt.Sprint(it.ID))+1)
		nameW = max(nameW, ansi.StringWidth(termtext.Line(itemSession(it))))
	}
	nameW = min(nameW, 24)
	msgW := max(w-(2+idW+len(gap)+nameW+len(gap)+reasonCol+len(gap)+ageCol+len(gap)), 3)
	end := min(d.off+d.rows, len(d.items))
	for i := d.off; i < end; i++ {
		it := d.items[i]
		mark := "  "
		if i == d.sel && d.focused {
			mark = styleBold.Styled("▸ ")
		}
		line := mark + cell(fmt.Sprintf("#%d", it.ID), idW) + gap + cell(termtext.Line(itemSession(it)), nameW) + gap +
			cell(reasonBadge(it.Reason).render(), reasonCol) + gap + cell(age(it.OpenedAt, d.now), ageCol) + gap +
			cell(termtext.Line(it.Message), msgW)
		lines = append(lines, strings.TrimRight(line, " "))
	}
	// Resolved items fill the room the open ones leave, greyed, with the
	// time they were resolved.
	for _, it := range d.resolved[:min(len(d.resolved), max(0, d.rows-(end-d.off)))] {
		how := "✓ " + termtext.Line(it.Resolution)
		if it.Resolution == "" {
			how = "✓ resolved"
		}
		line := "  " + cell(fmt.Sprintf("#%d", it.ID), idW) + gap + cell(termtext.Line(itemSession(it)), nameW) + gap +
			cell(how, reasonCol) + gap + cell(age(*it.ResolvedAt, d.now), ageCol) + gap +
			cell(termtext.Line(it.Message), msgW)
		lines = append(lines, styleQuiet.Styled(strings.TrimRight(line, " ")))
	}
	if hidden := len(d.items) - (end - d.off); hidden > 0 && d.rows > 0 {
		lines[0] += styleFaint.Styled(fmt.Sprintf("   (%d–%d of %d)", d.off+1, end, len(d.items)))
	}
	return strings.Join(lines, "\n")
}

// restoreList is the offer of DESIGN §6: sessions whose process is gone,
// each with the reason it is not running.
type restoreList struct {
	sessions []proto.SessionInfo
	rows     int
}

func (r restoreList) Render(w int) string {
	lines := []string{styleBold.Styled(fmt.Sprintf("Restore (%d)", len(r.sessions))) +
		styleFaint.Styled("  r resumes the selected session · R resumes all")}
	nameW := 4
	for _, s := range r.sessions {
		nameW = max(nameW, ansi.StringWidth(termtext.Line(s.Name)))
	}
	nameW = min(nameW, 24)
	shown := r.sessions
	if len(shown) > r.rows {
		shown = shown[:max(r.rows-1, 0)]
	}
	for _, s := range shown {
		reason := termtext.Line(s.Reason)
		if reason == "" {
			reason = "its process is gone"
		}
		lines = append(lines, "  "+styleRestorable.Styled("⟲ ")+cell(termtext.Line(s.Name), nameW)+gap+reason)
	}
	if n := len(r.sessions) - len(shown); n > 0 {
		lines = append(lines, styleFaint.Styled(fmt.Sprintf("  … %d more", n)))
	}
	return strings.Join(lines, "\n")
}

// helpLine is the bottom line: the keys that matter where the cursor is.
type helpLine struct {
	focus      focus
	help       bool
	zoom       bool
	dialog     bool
	explain    bool
	restore    bool
	history    bool
	transcript bool
	filtering  bool
}

func (h helpLine) Render(w int) string {
	// Each key with what it does and how much it matters: when the line is
	// too long, the least important keys go first (the drawer's title and
	// the help page still name them).
	type hint struct {
		key, does string
		rank      int
	}
	var keys []hint
	switch {
	case h.help:
		keys = []hint{{"?/esc", "close help", 9}, {"q", "quit", 9}}
	case h.transcript:
		keys = []hint{{"j/k", "scroll", 5}, {"t", "tool output", 4}, {"w", "replay", 6}, {"r", "resume", 6}, {"esc", "close", 9}}
	case h.history:
		keys = []hint{{"/", "search", 8}, {"enter", "open", 8}, {"w", "write replay", 6}, {"r", "resume in a pane", 6}, {"j/k", "move", 2}, {"h/esc", "sessions", 9}, {"q", "quit", 9}}
	case h.restore:
		keys = []hint{{"enter", "restore checked", 9}, {"space", "check", 7}, {"a", "all", 8}, {"esc", "none", 9}, {"j/k", "move", 3}}
	case h.dialog:
		keys = []hint{{"tab", "next field / complete", 8}, {"↑/↓", "choose", 6}, {"enter", "create and attach", 9}, {"esc", "cancel", 9}}
	case h.explain:
		keys = []hint{{"j/k", "scroll", 5}, {"esc", "close", 9}}
	case h.zoom:
		keys = []hint{{"j/k", "next session", 3}, {"enter", "attach", 8}, {"z/esc", "back to the list", 9}, {"?", "help", 9}, {"q", "quit", 9}}
	case h.filtering:
		keys = []hint{{"type", "to filter", 3}, {"enter", "keep", 9}, {"esc", "clear", 9}, {"↑/↓", "move", 2}}
	case h.focus == focusAttention:
		keys = []hint{{"j/k", "move", 1}, {"enter", "attach", 8}, {"a", "ack", 8}, {"A", "ack all", 3},
			{"tab", "sessions", 2}, {"?", "help", 9}, {"q", "quit", 9}}
	default:
		keys = []hint{{"j/k", "move", 1}, {"enter", "attach", 8}, {"c", "new", 7}, {"/", "filter", 6}, {"n", "next needing you", 5}, {"a", "ack", 7}, {"r", "resume", 6},
			{"R", "resume all", 4}, {"x", "kill", 5}, {"e", "rename", 3}, {"i", "explain", 3}, {"p", "preview", 3}, {"z", "zoom", 2}, {"tab", "drawer", 2}, {"?", "help", 9}, {"q", "quit", 9}}
	}
	for rank := 0; ; rank++ {
		var parts []string
		for _, k := range keys {
			if k.rank >= rank {
				parts = append(parts, k.key+" "+k.does)
			}
		}
		s := strings.Join(parts, " · ")
		if ansi.StringWidth(s) <= w || rank >= 9 {
			return styleFaint.Styled(fit(s, w))
		}
	}
}

// helpPage lists every key.
type helpPage struct {
	detachKey string // as config.toml spells it, e.g. "ctrl-\\"
}

var helpKeys = [][2]string{
	{"j k ↓ ↑ g G", "move in the focused list; first / last row"},
	{"tab", "switch between the sessions and the attention drawer"},
	{"/", "filter by name, directory or provider; enter keeps, esc clears"},
	{"n", "jump to the next session that needs you"},
	{"enter", "attach to the session; the detach key (%s) comes back here"},
	{"c", "new session: provider, directory (tab completes), name, arguments"},
	{"a / A", "ack the selected item (or the session's items) / every open item"},
	{"r / R", "resume the selected session / every restorable one"},
	{"x", "kill the selected session, or the marked ones (asks y/n)"},
	{"space / u", "mark or unmark the selected session / clear the marks"},
	{"e / i", "rename the selected session / explain its state"},
	{"L", "continue the selected session when its usage limit resets, or not (autocontinue)"},
	{"h", "history: search past conversations; enter reads one, w writes its replay, r resumes it"},
	{"p / z", "show or hide the live preview / zoom it (z or esc returns)"},
	{"f / d", "fold the exited and restorable sessions / group by directory"},
	{"mouse", "click selects, a click on the selection attaches; wheel moves"},
	{"?", "show or hide this help"},
	{"esc", "close help, the zoom or a view, or clear the filter"},
	{"q ctrl+c", "quit; sessions keep running"},
}

func (p helpPage) Render(w int) string {
	detach := p.detachKey
	if detach == "" {
		detach = `ctrl-\`
	}
	lines := []string{styleBold.Styled("Keys")}
	for _, k := range helpKeys {
		does := k[1]
		if strings.Contains(does, "%s") {
			does = fmt.Sprintf(does, detach)
		}
		lines = append(lines, "  "+cell(k[0], 11)+gap+does)
	}
	return strings.Join(lines, "\n")
}
