package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/transcript"
)

// ClockInterval is how often the dashboard redraws with no news, for the
// ages it shows; it asks the daemon nothing then.
const ClockInterval = time.Second

// RedialInterval is how long the dashboard waits before it opens the
// watch stream again after the daemon went away: one failed dial per
// interval costs nothing, and a restarted daemon shows within it.
const RedialInterval = 500 * time.Millisecond

// Backend is the daemon as the dashboard sees it. Its methods block until
// the daemon answers or ctx ends (the dashboard's, from Run); they run
// inside tea.Cmds, possibly concurrently, so an implementation must be
// safe for concurrent use.
type Backend interface {
	// Watch opens op "watch": the sessions and the attention drawer (open
	// items and those resolved in the last 24 hours, oldest first) now,
	// and a stream of their changes, pushed by the daemon. The stream ends
	// when ctx does.
	Watch(ctx context.Context) (proto.WatchUpdate, WatchStream, error)
	// Ack resolves the items ids, or every open item when all is set.
	Ack(ctx context.Context, ids []int64, all bool) (proto.AckResult, error)
	// Resume relaunches the named sessions, or every restorable one.
	Resume(ctx context.Context, names []string, all bool) ([]ResumeOutcome, error)
	// Kill ends a session's process and removes the session.
	Kill(ctx context.Context, name string) error
	// Preview opens op "preview" for the named session: its screen now,
	// and a stream of the next ones. The stream ends when ctx does.
	Preview(ctx context.Context, name string) (proto.PreviewScreen, PreviewStream, error)
	// Choices lists what the new-session dialog offers (ChoicesFrom).
	Choices(ctx context.Context) ([]Choice, error)
	// New answers op "new"; the backend adds the caller's environment and
	// terminal size.
	New(ctx context.Context, a proto.NewArgs) (proto.SessionInfo, error)
	// Rename answers op "rename".
	Rename(ctx context.Context, name, newName string) error
	// Autocontinue answers op "autocontinue": continue the session once
	// the usage limit it stopped at resets, or not.
	Autocontinue(ctx context.Context, name string, on bool) error
	// Explain answers op "explain".
	Explain(ctx context.Context, name string) (proto.Explanation, error)
	// History lists past conversations from the history index, newest
	// first, or those matching a full-text query, best first.
	History(ctx context.Context, query string) ([]HistoryRow, error)
	// Transcript reads one conversation by its ref (PROVIDER:ID).
	Transcript(ctx context.Context, ref string) (*transcript.Transcript, error)
	// WriteReplay writes the conversation's HTML replay and returns the
	// file's path.
	WriteReplay(ctx context.Context, ref string) (string, error)
}

// ResumeOutcome is one session's result of op "resume".
type ResumeOutcome struct {
	Name    string
	Resumed bool
	Reason  string
}

// Options configure a dashboard.
type Options struct {
	Backend Backend
	// Select is the session (by name) to put the cursor on, such as the one
	// just detached from.
	Select string
	// Notice is shown in the status line until the first key press, such
	// as why an attach failed.
	Notice string
	// Home shortens working directories under it to ~.
	Home string
	// DetachKey is the configured detach key, for the help page.
	DetachKey string
	// Now is the clock for ages; nil means time.Now.
	Now func() time.Time
	// NoColor draws without colours or other attributes, for NO_COLOR.
	NoColor bool
	// Dir is where the dashboard was started: the new-session dialog's
	// default directory.
	Dir string
	// Bell rings the terminal's bell when an attention item opens
	// (config.toml's [notify] bell).
	Bell bool
	// State is the dashboard as Run left it, to come back to it after an
	// attach.
	State *State
}

// State is what the dashboard keeps across an attach: the filter, the
// focus, the preview and its zoom, the marks, the fold and the grouping. The zero value is a fresh
// dashboard.
type State struct {
	filter  string
	focus   focus
	selItem int64
	pvPref  pvPref
	zoom    bool
	marks   map[string]bool
	offered map[string]bool
	fold    bool
	byDir   bool
}

// focus is the list that the cursor keys move in.
type focus int

const (
	focusSessions focus = iota
	focusAttention
)

// Model is the dashboard's whole state. It is a value: Update returns the
// next one.
type Model struct {
	// ctx bounds the daemon calls: Run's.
	ctx       context.Context
	backend   Backend
	home      string
	detachKey string
	nowFn     func() time.Time

	width, height int

	loaded      bool
	all         []proto.SessionInfo   // every session, in display order
	sessions    []proto.SessionInfo   // those the filter lets through
	items       []proto.AttentionItem // open items, oldest first
	resolved    []proto.AttentionItem // items resolved in the last 24 hours, newest first
	now         time.Time
	rawSessions []proto.SessionInfo   // the sessions as last pushed, in the daemon's order
	rawItems    []proto.AttentionItem // the drawer as last pushed
	bell        bool                  // ring for an item that opens
	err         error                 // the watch stream broke: the daemon is away
	awaySince   time.Time             // when the daemon stopped answering
	hosts       []HostState           // the backend's hosts (HostSource); nil without

	// The background agents (ExternalSource, external.go), listed beside
	// the panes.
	ext     []proto.SessionInfo
	extBusy bool      // a listing is under way
	extAt   time.Time // when the last listing came back
	extErr  string    // what the last listing failed with, said once

	filter     string // the session filter, as typed
	filtering  bool   // keys go to the filter
	fold       bool   // exited and restorable sessions are folded away
	byDir      bool   // live sessions are grouped by directory
	noColor    bool
	confirmAll bool // A awaits y/n

	focus    focus
	selName  string // the selected session, by name: names are what users see
	selItem  int64  // the selected attention item
	sessOff  int    // first visible session row
	itemOff  int    // first visible attention row
	help     bool
	quitting bool
	confirm  string // a session awaiting y/n before kill
	status   string // result of the last action
	statusOK bool
	busy     string // the action in flight

	// The watch stream (watch.go): watchSeq numbers its opens, so that
	// messages of a stream given up are dropped.
	watchSeq int
	watch    WatchStream
	ticking  bool // a clock tick is pending

	// The preview of the selected session (preview.go): pvPref is the
	// user's choice, zoom gives it the whole screen.
	pvPref pvPref
	zoom   bool
	pv     preview

	startDir    string
	dlg         *newDialog // the new-session dialog, when open
	renameFrom  string     // the session being renamed, while its new name is typed
	renameTo    string
	marks       map[string]bool // sessions marked for a kill of several
	confirmMany []string        // marked sessions awaiting y/n before kill
	explain     *explainView    // the explain view, when open
	restore     *restorePrompt  // the restore prompt, when open
	tab         tab
	hist        *historyTab     // the history tab, once opened
	tview       *transcriptView // a conversation opened from it
	offered     map[string]bool // sessions (by id) the restore prompt offered

	attach string
}

// tab is the dashboard's page: the sessions or the history.
type tab int

const (
	tabSessions tab = iota
	tabHistory
)

// pvPref is whether the user wants the preview box.
type pvPref int

const (
	pvAuto pvPref = iota // shown where the screen has room for it
	pvOff
	pvOn // shown even on a small screen, under the list
)

// New builds the dashboard's initial model.
func New(o Options) Model {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	m := Model{
		ctx: context.Background(), backend: o.Backend, home: o.Home, detachKey: o.DetachKey, nowFn: now,
		selName: o.Select, status: o.Notice, noColor: o.NoColor, startDir: o.Dir, bell: o.Bell,
		width: 80, height: 24,
	}
	if st := o.State; st != nil {
		m.filter, m.focus, m.selItem, m.pvPref, m.zoom, m.marks = st.filter, st.focus, st.selItem, st.pvPref, st.zoom, st.marks
		m.offered, m.fold, m.byDir = st.offered, st.fold, st.byDir
	}
	return m
}

// State is the part of the dashboard that an attach should not lose.
func (m Model) State() *State {
	return &State{filter: m.filter, focus: m.focus, selItem: m.selItem, pvPref: m.pvPref, zoom: m.zoom, marks: m.marks, offered: m.offered, fold: m.fold, byDir: m.byDir}
}

// Attach is the session the user chose to attach to, once the program has
// ended; "" means the user quit.
func (m Model) Attach() string { return m.attach }

// Messages. Each daemon call's result comes back as one of these.
type (
	clockMsg  struct{}
	actionMsg struct {
		text    string
		err     error
		restore string   // the selection to go back to (a rename that failed)
		unmark  []string // marks to drop (sessions killed)
	}
)

// Init opens the watch stream.
func (m Model) Init() tea.Cmd { return m.openWatchCmd(1) }

// Update applies one message, then lets the preview follow the
// selection.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg.(type) {
	case previewOpenedMsg, previewMsg:
		m, cmd = m.updatePreview(msg)
	default:
		var next tea.Model
		next, cmd = m.update(msg)
		m = next.(Model)
	}
	if m.attach != "" || m.quitting {
		return m, cmd
	}
	m, pc := m.syncPreview()
	return m, tea.Batch(cmd, pc)
}

func (m Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m = m.scroll()
		return m, nil
	case watchOpenedMsg, watchMsg, redialMsg:
		return m.updateWatch(msg)
	case clockMsg:
		m.now = m.nowFn()
		m.hosts = m.hostsNow()
		m, ext := m.pollExternal()
		return m, tea.Batch(ext, tea.Tick(ClockInterval, func(time.Time) tea.Msg { return clockMsg{} }))
	case externalMsg:
		return m.applyExternal(msg), nil
	case externalOpenedMsg:
		m.busy = ""
		if msg.err != nil {
			m.status, m.statusOK = "open "+termtext.Line(msg.agent)+": "+errorText(msg.err), false
			return m, nil
		}
		m.selName, m.attach = msg.name, msg.name
		return m, tea.Quit
	case actionMsg:
		m.busy = ""
		m.status, m.statusOK = msg.text, msg.err == nil
		if msg.err != nil {
			m.status = errorText(msg.err)
		}
		if msg.restore != "" {
			m.selName = msg.restore
		}
		if len(msg.unmark) > 0 && len(m.marks) > 0 {
			marks := map[string]bool{}
			for k, v := range m.marks {
				if !slices.Contains(msg.unmark, k) {
					marks[k] = v
				}
			}
			m.marks = marks
		}
		// What the action changed comes back pushed by the daemon.
		return m, nil
	case choicesMsg, completeMsg, createdMsg:
		return m.updateDialog(msg)
	case historyMsg:
		if m.hist != nil && msg.seq == m.hist.seq {
			h := *m.hist
			h.loading, h.err, h.rows, h.shown = false, msg.err, msg.rows, msg.query
			h.sel = min(h.sel, max(len(h.rows)-1, 0))
			m.hist = &h
		}
		return m, nil
	case transcriptMsg:
		if m.tview != nil && m.tview.row.Ref == msg.ref {
			m.tview = &transcriptView{row: m.tview.row, t: msg.t, err: msg.err}
		}
		return m, nil
	case explainMsg:
		if m.explain != nil && m.explain.name == msg.name {
			m.explain = &explainView{name: msg.name, x: msg.x, err: msg.err}
		}
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		return m.mouse(msg.(tea.MouseMsg))
	}
	return m, nil
}

// key handles one key press.
func (m Model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := msg.String()
	switch {
	case m.restore != nil:
		return m.restoreKey(k)
	case m.tab == tabHistory && !m.help && m.dlg == nil:
		return m.historyKey(msg)
	case m.dlg != nil:
		return m.dialogKey(msg)
	case m.renameFrom != "":
		return m.renameKey(msg)
	case m.explain != nil:
		return m.explainKey(k)
	}
	if m.filtering {
		return m.filterKey(msg)
	}
	if m.confirmMany != nil {
		names := m.confirmMany
		m.confirmMany = nil
		if k == "y" || k == "Y" {
			return m.run("killing "+plural(len(names), "session")+"…", m.killCmd(names))
		}
		m.status, m.statusOK = "kill cancelled", true
		return m, nil
	}
	if m.confirmAll {
		m.confirmAll = false
		if k == "y" || k == "Y" {
			return m.run("acknowledging all items…", ackCmd(m.ctx, m.backend, nil, true))
		}
		m.status, m.statusOK = "acknowledge all cancelled", true
		return m, nil
	}
	if m.confirm != "" {
		name := m.confirm
		m.confirm = ""
		if k == "y" || k == "Y" {
			m.busy = "killing " + name + "…"
			ctx, b := m.ctx, m.backend
			return m, func() tea.Msg {
				if err := b.Kill(ctx, name); err != nil {
					return actionMsg{err: fmt.Errorf("kill %s: %w", name, err)}
				}
				return actionMsg{text: "killed " + name}
			}
		}
		m.status, m.statusOK = "kill cancelled", true
		return m, nil
	}
	m.status = ""
	switch k {
	case "q", "ctrl+c":
		m.quitting = true
		return m, tea.Quit
	case "?":
		m.help = !m.help
		return m, nil
	case "esc":
		switch {
		case m.help:
			m.help = false
		case m.zoom:
			m.zoom = false
		case m.filter != "":
			return m.setFilter(""), nil
		}
		return m.scroll(), nil
	}
	if m.help {
		// The help page covers the lists; keys that act on a selection
		// would act on something the user cannot see.
		return m, nil
	}
	switch k {
	case "j", "down":
		return m.move(1), nil
	case "k", "up":
		return m.move(-1), nil
	case "g", "home":
		return m.move(-1 << 30), nil
	case "G", "end":
		return m.move(1 << 30), nil
	case "/":
		m.filtering, m.focus = true, focusSessions
		return m.scroll(), nil
	case "n":
		return m.nextNeedy(), nil
	case "tab", "shift+tab":
		if m.focus == focusSessions && len(m.items) > 0 {
			m.focus = focusAttention
		} else {
			m.focus = focusSessions
		}
		return m.scroll(), nil
	case "enter":
		return m.enter()
	case "a":
		if s, ok := m.selected(); ok && m.focus == focusSessions && s.External != nil {
			m.status = refuseExternal("acknowledge", s)
			return m, nil
		}
		return m.ack()
	case "A":
		if len(m.items) == 0 {
			m.status, m.statusOK = "nothing needs your attention", true
			return m, nil
		}
		m.confirmAll = true
		return m, nil
	case "r":
		s, ok := m.selected()
		if !ok {
			return m, nil
		}
		if no := refuseExternal("resume", s); no != "" {
			m.status = no
			return m, nil
		}
		if s.State == "running" {
			m.status = s.Name + " is already running"
			return m, nil
		}
		return m.run("resuming "+s.Name+"…", resumeCmd(m.ctx, m.backend, []string{s.Name}, false))
	case "R":
		if m.countState("restorable") == 0 {
			m.status, m.statusOK = "no session to restore", true
			return m, nil
		}
		return m.run("resuming all restorable sessions…", resumeCmd(m.ctx, m.backend, nil, true))
	case "x":
		if names := m.marked(); len(names) > 0 {
			m.confirmMany = names
			return m, nil
		}
		if s, ok := m.selected(); ok {
			if no := refuseExternal("kill", s); no != "" {
				m.status = no
				return m, nil
			}
			m.confirm = s.Name
		}
		return m, nil
	case "space", " ":
		if s, ok := m.selected(); ok && m.focus == focusSessions && s.External != nil {
			m.status = refuseExternal("mark", s)
			return m, nil
		}
		if m.focus == focusSessions {
			return m.toggleMark(), nil
		}
		return m, nil
	case "u":
		if len(m.marks) > 0 {
			m.marks = nil
			m.status, m.statusOK = "marks cleared", true
		}
		return m, nil
	case "c":
		return m.openNew()
	case "e":
		if s, ok := m.selected(); ok {
			if no := refuseExternal("rename", s); no != "" {
				m.status = no
				return m, nil
			}
			m.renameFrom, m.renameTo = s.Name, s.Name
		}
		return m, nil
	case "L":
		if s, ok := m.selected(); ok {
			if no := refuseExternal("autocontinue", s); no != "" {
				m.status = no
				return m, nil
			}
			return m.run("autocontinue "+s.Name+"…", autocontinueCmd(m.ctx, m.backend, s.Name, !s.ContinueAfterLimit))
		}
		return m, nil
	case "i":
		return m.openExplain()
	case "h":
		return m.openHistory()
	case "p":
		if m.zoom || m.pvMode() != pvHidden {
			m.pvPref, m.zoom = pvOff, false
		} else {
			m.pvPref = pvOn
		}
		return m.scroll(), nil
	case "f":
		return m.toggleFold(), nil
	case "d":
		return m.toggleByDir(), nil
	case "z":
		m.zoom = !m.zoom
		if m.zoom && m.pvPref == pvOff {
			m.pvPref = pvAuto
		}
		return m.scroll(), nil
	}
	return m, nil
}

// target is the session the cursor points at: the selected session, or
// with the drawer focused the session of the selected item.
func (m Model) target() (proto.SessionInfo, bool) {
	if m.focus == focusAttention {
		if it, ok := m.selectedItem(); ok {
			return m.sessionByID(it.SessionID)
		}
	}
	return m.selected()
}

// run starts an action unless one is in flight: actions are not queued, so
// a repeated key does not resume or kill twice.
func (m Model) run(busy string, cmd tea.Cmd) (tea.Model, tea.Cmd) {
	if m.busy != "" {
		m.status = "busy: " + m.busy
		return m, nil
	}
	m.busy = busy
	return m, cmd
}

// enter attaches to the selected session, or to the session of the
// selected attention item.
func (m Model) enter() (tea.Model, tea.Cmd) {
	s, ok := m.selected()
	if m.focus == focusAttention {
		it, found := m.selectedItem()
		if !found {
			return m, nil
		}
		s, ok = m.sessionByID(it.SessionID)
		if !ok {
			m.status = fmt.Sprintf("session %s is gone", itemSession(it))
			return m, nil
		}
	}
	if !ok {
		return m, nil
	}
	if s.External != nil {
		return m.openExternal(s)
	}
	switch s.State {
	case "running":
		m.attach = s.Name
		return m, tea.Quit
	case "restorable":
		m.status = s.Name + " is not running; r resumes it"
	default:
		m.status = s.Name + " has exited; r starts it again, x removes it"
	}
	return m, nil
}

// ack resolves the selected attention item, or with the session list
// focused, every open item of the selected session.
func (m Model) ack() (tea.Model, tea.Cmd) {
	var ids []int64
	what := ""
	if m.focus == focusAttention {
		it, ok := m.selectedItem()
		if !ok {
			return m, nil
		}
		ids, what = []int64{it.ID}, fmt.Sprintf("#%d", it.ID)
	} else {
		s, ok := m.selected()
		if !ok {
			return m, nil
		}
		for _, it := range m.items {
			if it.SessionID == s.ID {
				ids = append(ids, it.ID)
			}
		}
		if len(ids) == 0 {
			m.status, m.statusOK = "nothing to acknowledge for "+s.Name, true
			return m, nil
		}
		what = s.Name
	}
	return m.run("acknowledging "+what+"…", ackCmd(m.ctx, m.backend, ids, false))
}

func ackCmd(ctx context.Context, b Backend, ids []int64, all bool) tea.Cmd {
	return func() tea.Msg {
		res, err := b.Ack(ctx, ids, all)
		if err != nil {
			return actionMsg{err: fmt.Errorf("acknowledge: %w", err)}
		}
		switch {
		case len(res.Acknowledged) == 0 && len(res.Already) > 0:
			return actionMsg{text: "already resolved"}
		case len(res.Acknowledged) == 0:
			return actionMsg{text: "nothing was open"}
		}
		return actionMsg{text: fmt.Sprintf("acknowledged %s", plural(len(res.Acknowledged), "item"))}
	}
}

func resumeCmd(ctx context.Context, b Backend, names []string, all bool) tea.Cmd {
	return func() tea.Msg {
		out, err := b.Resume(ctx, names, all)
		if err != nil {
			return actionMsg{err: fmt.Errorf("resume: %w", err)}
		}
		if len(out) == 0 {
			return actionMsg{text: "nothing to resume"}
		}
		var ok, failed []string
		for _, o := range out {
			if o.Resumed {
				ok = append(ok, o.Name)
			} else {
				failed = append(failed, o.Name+" ("+o.Reason+")")
			}
		}
		var parts []string
		if len(ok) > 0 {
			parts = append(parts, "resumed "+strings.Join(ok, ", "))
		}
		if len(failed) > 0 {
			parts = append(parts, "not resumed: "+strings.Join(failed, "; "))
			return actionMsg{err: errors.New(strings.Join(parts, "; "))}
		}
		return actionMsg{text: strings.Join(parts, "; ")}
	}
}

// errorText is an error as the status line shows it: the daemon's message
// and hint, or the error's own text.
func errorText(err error) string {
	if pe, ok := errors.AsType[*proto.Error](err); ok && pe.Hint != "" {
		return err.Error() + " (" + pe.Hint + ")"
	}
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	return err.Error()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// selIndex is the row of the selected session; -1 when there are none.
func (m Model) selIndex() int {
	for i, s := range m.sessions {
		if s.Name == m.selName {
			return i
		}
	}
	if len(m.sessions) == 0 {
		return -1
	}
	return 0
}

func (m Model) selected() (proto.SessionInfo, bool) {
	i := m.selIndex()
	if i < 0 {
		return proto.SessionInfo{}, false
	}
	return m.sessions[i], true
}

func (m Model) itemIndex() int {
	for i, it := range m.items {
		if it.ID == m.selItem {
			return i
		}
	}
	if len(m.items) == 0 {
		return -1
	}
	return 0
}

func (m Model) selectedItem() (proto.AttentionItem, bool) {
	i := m.itemIndex()
	if i < 0 {
		return proto.AttentionItem{}, false
	}
	return m.items[i], true
}

func (m Model) sessionByID(id string) (proto.SessionInfo, bool) {
	for _, s := range m.all {
		if s.ID == id {
			return s, true
		}
	}
	return proto.SessionInfo{}, false
}

func (m Model) countState(state string) int {
	n := 0
	for _, s := range m.all {
		if s.State == state {
			n++
		}
	}
	return n
}

// move moves the cursor of the focused list by d rows, stopping at the ends.
func (m Model) move(d int) Model {
	if m.focus == focusAttention {
		if i := m.itemIndex(); i >= 0 {
			m.selItem = m.items[min(max(i+d, 0), len(m.items)-1)].ID
		}
	} else if i := m.selIndex(); i >= 0 {
		m.selName = m.sessions[min(max(i+d, 0), len(m.sessions)-1)].Name
	}
	return m.scroll()
}

// clamp keeps the cursors on rows that exist after a refresh. A selection
// that went away leaves the cursor on the row that took its place (old is
// where it was).
func (m Model) clamp(oldSess, oldItem int) Model {
	if len(m.sessions) > 0 {
		found := false
		for _, s := range m.sessions {
			found = found || s.Name == m.selName
		}
		if !found {
			m.selName = m.sessions[min(max(oldSess, 0), len(m.sessions)-1)].Name
		}
	}
	if len(m.items) == 0 {
		m.focus = focusSessions
	} else {
		found := false
		for _, it := range m.items {
			found = found || it.ID == m.selItem
		}
		if !found {
			m.selItem = m.items[min(max(oldItem, 0), len(m.items)-1)].ID
		}
	}
	return m.scroll()
}

// scroll keeps the selected rows inside their windows.
func (m Model) scroll() Model {
	l := m.layout()
	m.sessOff = window(m.sessOff, m.selIndex(), l.sessionRows, len(m.sessions))
	m.itemOff = window(m.itemOff, m.itemIndex(), l.itemRows, len(m.items))
	return m
}

// window returns the first visible row of a list of n rows shown rows at a
// time, moving off as little as needed to show sel.
func window(off, sel, rows, n int) int {
	if rows <= 0 || n <= rows || sel < 0 {
		return 0
	}
	if sel < off {
		off = sel
	}
	if sel >= off+rows {
		off = sel - rows + 1
	}
	return min(max(off, 0), n-rows)
}

func itemSession(it proto.AttentionItem) string {
	if it.SessionName != "" {
		return it.SessionName
	}
	return it.SessionID
}
