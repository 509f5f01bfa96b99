package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/transcript"
)

// The history tab: past conversations from the history index, searched in
// full text, each opened as a transcript, written as a replay, or resumed
// in a new pane.

// HistoryRow is one past conversation as the history tab lists it. Title
// and Snippet are redacted by the backend.
type HistoryRow struct {
	Ref       string // PROVIDER:ID, which `muster show` and replay accept
	Provider  string
	ID        string
	Title     string
	CWD       string
	Snippet   string
	When      time.Time
	Prompts   int
	Tools     int
	Resumable bool // the provider can reopen it in a pane
}

type historyTab struct {
	query   string
	editing bool
	rows    []HistoryRow
	sel     int
	off     int
	loading bool
	err     error
	seq     int
	shown   string // the query whose results are listed
}

type transcriptView struct {
	row     HistoryRow
	t       *transcript.Transcript
	err     error
	loading bool
	tools   bool // tool output unfolded
	off     int
	cache   []string
	cacheW  int
}

type (
	historyMsg struct {
		seq   int
		query string
		rows  []HistoryRow
		err   error
	}
	transcriptMsg struct {
		ref string
		t   *transcript.Transcript
		err error
	}
)

// openHistory switches to the history tab, loading it the first time.
func (m Model) openHistory() (tea.Model, tea.Cmd) {
	m.tab = tabHistory
	if m.hist == nil {
		m.hist = &historyTab{}
		return m.searchHistory()
	}
	return m, nil
}

func (m Model) searchHistory() (tea.Model, tea.Cmd) {
	h := *m.hist
	m.hist = &h
	h.seq++
	h.loading, h.err = true, nil
	ctx, b, seq, q := m.ctx, m.backend, h.seq, strings.TrimSpace(h.query)
	return m, func() tea.Msg {
		rows, err := b.History(ctx, q)
		return historyMsg{seq: seq, query: q, rows: rows, err: err}
	}
}

func (m Model) selectedRow() (HistoryRow, bool) {
	if m.hist == nil || m.hist.sel < 0 || m.hist.sel >= len(m.hist.rows) {
		return HistoryRow{}, false
	}
	return m.hist.rows[m.hist.sel], true
}

// historyKey handles keys on the history tab and in the transcript view.
func (m Model) historyKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	h := *m.hist
	m.hist = &h
	k := msg.String()
	if h.editing {
		switch k {
		case "esc":
			h.editing = false
			return m, nil
		case "enter":
			h.editing = false
			h.sel, h.off = 0, 0
			return m.searchHistory()
		case "backspace", "ctrl+h":
			r := []rune(h.query)
			if len(r) > 0 {
				h.query = string(r[:len(r)-1])
			}
		case "ctrl+u":
			h.query = ""
		case "ctrl+c":
			m.quitting = true
			return m, tea.Quit
		default:
			if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
				h.query += msg.Text
			}
		}
		return m, nil
	}
	if m.tview != nil {
		return m.transcriptKey(k)
	}
	rows := m.historyRows()
	switch k {
	case "j", "down":
		h.sel = min(h.sel+1, max(len(h.rows)-1, 0))
	case "k", "up":
		h.sel = max(h.sel-1, 0)
	case "g", "home":
		h.sel = 0
	case "G", "end":
		h.sel = max(len(h.rows)-1, 0)
	case "/":
		h.editing = true
	case "esc", "h":
		if k == "esc" && h.shown != "" {
			h.query = ""
			return m.searchHistory()
		}
		m.tab = tabSessions
	case "enter":
		row, ok := m.selectedRow()
		if !ok {
			return m, nil
		}
		m.tview = &transcriptView{row: row, loading: true}
		ctx, b := m.ctx, m.backend
		return m, func() tea.Msg {
			t, err := b.Transcript(ctx, row.Ref)
			return transcriptMsg{ref: row.Ref, t: t, err: err}
		}
	case "w":
		return m.writeReplay()
	case "r":
		return m.resumeRow()
	case "q", "ctrl+c":
		m.quitting = true
		return m, tea.Quit
	case "?":
		m.help = true
	}
	h.off = window(h.off, h.sel, rows, len(h.rows))
	return m, nil
}

func (m Model) writeReplay() (tea.Model, tea.Cmd) {
	row, ok := m.selectedRow()
	if m.tview != nil {
		row, ok = m.tview.row, true
	}
	if !ok {
		return m, nil
	}
	ctx, b := m.ctx, m.backend
	return m.run("writing the replay of "+row.Ref+"…", func() tea.Msg {
		path, err := b.WriteReplay(ctx, row.Ref)
		if err != nil {
			return actionMsg{err: fmt.Errorf("replay %s: %w", row.Ref, err)}
		}
		return actionMsg{text: "wrote " + path}
	})
}

// resumeRow reopens the conversation in a new pane in its directory (or
// where the dashboard started, when that is gone) and attaches to it.
func (m Model) resumeRow() (tea.Model, tea.Cmd) {
	row, ok := m.selectedRow()
	if m.tview != nil {
		row, ok = m.tview.row, true
	}
	if !ok {
		return m, nil
	}
	if !row.Resumable {
		m.status, m.statusOK = row.Provider+" cannot reopen a conversation in a pane", false
		return m, nil
	}
	// A conversation a live pane runs is attached to, not opened twice:
	// two agents on one conversation write one transcript (issue 23).
	for _, s := range m.rawSessions {
		if s.Provider == row.Provider && s.NativeSessionID == row.ID && s.State == proto.PaneRunning {
			m.selName, m.attach = s.Name, s.Name
			return m, tea.Quit
		}
	}
	// Nor one a background agent runs: its CLI's attach joins that agent.
	for _, s := range m.ext {
		if s.Provider == row.Provider && s.NativeSessionID == row.ID {
			return m.openExternal(s)
		}
	}
	if m.busy != "" {
		m.status = "busy: " + m.busy
		return m, nil
	}
	m.busy = "resuming " + row.Ref + "…"
	ctx, b, start := m.ctx, m.backend, m.startDir
	return m, func() tea.Msg {
		dir := row.CWD
		if st, err := os.Stat(dir); dir == "" || err != nil || !st.IsDir() {
			dir = start
		}
		info, err := b.New(ctx, proto.NewArgs{Provider: row.Provider, ResumeID: row.ID, Dir: dir})
		return createdMsg{info: info, err: err}
	}
}

func (m Model) transcriptKey(k string) (tea.Model, tea.Cmd) {
	v := *m.tview
	m.tview = &v
	page := max(m.bodyHeight()-3, 1)
	switch k {
	case "esc", "q":
		m.tview = nil
	case "j", "down":
		v.off++
	case "k", "up":
		v.off--
	case "space", " ", "pgdown", "f":
		v.off += page
	case "b", "pgup":
		v.off -= page
	case "g", "home":
		v.off = 0
	case "G", "end":
		v.off = 1 << 30
	case "t":
		v.tools, v.cache = !v.tools, nil
	case "w":
		return m.writeReplay()
	case "r":
		return m.resumeRow()
	case "ctrl+c":
		m.quitting = true
		return m, tea.Quit
	}
	v.off = max(v.off, 0)
	return m, nil
}

// historyRows is how many rows of the list fit.
func (m Model) historyRows() int { return max(m.bodyHeight()-3, 1) }

// renderHistory draws the tab in w×h cells.
func (m Model) renderHistory(w, h int) []string {
	if m.tview != nil {
		return m.tview.Render(w, h)
	}
	t := m.hist
	q := termtext.Line(t.query)
	if t.editing {
		q += "▏"
	}
	head := styleBold.Styled("History") + "  " + styleBold.Styled("/") + " " + q
	switch {
	case t.loading:
		head += styleFaint.Styled("  searching…")
	case t.err != nil:
		head += "  " + styleError.Styled(termtext.Line(errorText(t.err)))
	case t.shown != "":
		head += styleFaint.Styled(fmt.Sprintf("  %s matching %q", plural(len(t.rows), "session"), termtext.Line(t.shown)))
	default:
		head += styleFaint.Styled("  " + plural(len(t.rows), "session") + ", newest first")
	}
	lines := []string{fit(head, w)}
	if len(t.rows) == 0 && !t.loading {
		lines = append(lines, "", "  No sessions found.")
		return lines
	}
	provW := 8
	dirW := min(30, max(w/5, 8))
	titleW := max(w-(2+5+len(gap)+provW+len(gap)+dirW+len(gap)), 10)
	lines = append(lines, styleFaint.Styled(strings.TrimRight("  "+cell("WHEN", 5)+gap+cell("PROVIDER", provW)+gap+cell("TITLE", titleW)+gap+"DIRECTORY", " ")))
	rows := m.historyRows()
	end := min(t.off+rows, len(t.rows))
	for i := t.off; i < end; i++ {
		r := t.rows[i]
		title := termtext.Line(r.Title)
		if title == "" {
			title = "(untitled)"
		}
		if r.Snippet != "" {
			title += styleFaint.Styled(" — " + termtext.Line(r.Snippet))
		}
		mark := "  "
		if i == t.sel {
			mark = styleBold.Styled("▸ ")
		}
		when := "-"
		if !r.When.IsZero() {
			when = age(r.When.UTC().Format(time.RFC3339), m.now)
		}
		lines = append(lines, strings.TrimRight(mark+cell(when, 5)+gap+cell(termtext.Line(r.Provider), provW)+gap+
			cell(title, titleW)+gap+cellLeft(tilde(termtext.Line(r.CWD), m.home), dirW), " "))
	}
	return lines
}

// Render draws the transcript in w×h cells: prompts and replies, each tool
// call on one line with its output folded (t unfolds).
func (v *transcriptView) Render(w, h int) []string {
	title := termtext.Line(v.row.Title)
	if title == "" {
		title = v.row.Ref
	}
	head := fit(styleBold.Styled("Transcript ")+title+styleFaint.Styled("  "+termtext.Line(v.row.Ref)), w)
	var body []string
	switch {
	case v.loading:
		body = []string{styleFaint.Styled("reading the transcript…")}
	case v.err != nil:
		body = []string{styleError.Styled(termtext.Line(errorText(v.err)))}
	default:
		if v.cache == nil || v.cacheW != w {
			v.cache, v.cacheW = transcriptLines(v.t, w, v.tools), w
		}
		body = v.cache
	}
	rows := max(h-2, 1)
	off := min(v.off, max(len(body)-rows, 0))
	out := []string{head, styleFaint.Styled(fit(fmt.Sprintf("j/k scroll · space/b page · t %s tool output · w replay · r resume · esc closes   %d–%d of %d",
		map[bool]string{true: "folds", false: "unfolds"}[v.tools], off+1, min(off+rows, len(body)), len(body)), w))}
	return append(out, body[off:min(off+rows, len(body))]...)
}

// transcriptLines lays a transcript out in lines of at most w columns.
func transcriptLines(t *transcript.Transcript, w int, tools bool) []string {
	if t == nil {
		return nil
	}
	var out []string
	wrap := func(text, prefix string, style func(string) string) {
		text = termtext.Strip(text)
		for _, para := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			wrapped := ansi.Wrap(para, max(w-ansi.StringWidth(prefix), 10), "")
			for _, l := range strings.Split(wrapped, "\n") {
				out = append(out, style(prefix+l))
			}
		}
	}
	plain := func(s string) string { return s }
	results := map[string]transcript.Item{}
	for _, it := range t.Items {
		if it.Kind == transcript.ToolResult && it.CallID != "" {
			results[it.CallID] = it
		}
	}
	n := 0
	for _, it := range t.Items {
		switch it.Kind {
		case transcript.UserPrompt:
			n++
			head := fmt.Sprintf("── prompt %d ", n)
			out = append(out, "", styleFaint.Styled(head+strings.Repeat("─", max(w-ansi.StringWidth(head), 0))))
			text := it.Text
			if strings.TrimSpace(text) == "" && len(it.Images) > 0 {
				text = "(image)"
			}
			wrap(text, "› ", styleBold.Styled)
		case transcript.AssistantText:
			out = append(out, "")
			wrap(it.Text, "", plain)
		case transcript.Compaction:
			out = append(out, "", styleFaint.Styled("[context compacted]"))
		case transcript.ToolUse:
			name := it.Tool
			if name == "" {
				name = it.RawTool
			}
			line := "⚙ " + termtext.Line(name) + " " + toolSubject(it)
			r, ok := results[it.CallID]
			if ok && r.IsError {
				line = styleFailed.Styled("✗ ") + line[len("⚙ "):]
			}
			if ok && !tools {
				if n := strings.Count(strings.TrimRight(r.Text, "\n"), "\n") + 1; strings.TrimSpace(r.Text) != "" {
					line += styleFaint.Styled("  ⎿ " + plural(n, "line"))
				}
			}
			out = append(out, fit(styleFaint.Styled(line), w))
			if ok && tools && strings.TrimSpace(r.Text) != "" {
				lines := strings.Split(strings.TrimRight(termtext.Strip(r.Text), "\n"), "\n")
				for i, l := range lines {
					if i == 20 {
						out = append(out, styleFaint.Styled(fmt.Sprintf("  │ … %d more lines", len(lines)-20)))
						break
					}
					out = append(out, fit(styleFaint.Styled("  │ "+l), w))
				}
			}
		}
	}
	return out
}

// toolSubject is what a tool call acted on, in one line.
func toolSubject(it transcript.Item) string {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Pattern  string `json:"pattern"`
	}
	json.Unmarshal(it.Input, &in)
	switch {
	case in.Command != "":
		return "$ " + termtext.Line(in.Command)
	case in.FilePath != "":
		return termtext.Line(in.FilePath)
	case in.Pattern != "":
		return termtext.Line(in.Pattern)
	case len(it.Input) > 0 && string(it.Input) != "{}":
		return termtext.Clip(string(it.Input), 120)
	}
	return ""
}
