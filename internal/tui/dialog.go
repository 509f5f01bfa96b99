package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"mvdan.cc/sh/v3/shell"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// Choice is one line of the new-session dialog's picker: a built-in
// provider (found on PATH or not), a [[launcher]] of config.toml, or the
// user's shell.
type Choice struct {
	Name string
	// Kind is "provider", "launcher" or "shell".
	Kind string
	// Path is where the provider's executable was found; "" when missing.
	Path string
	// Install says how to get a missing provider.
	Install string
	// Command and Resume are a launcher's templates.
	Command, Resume string
}

// available reports whether the choice can start a session.
func (c Choice) available() bool { return c.Kind != "provider" || c.Path != "" }

// newDialog is the new-session dialog: a provider picker, the working
// directory with path completion, an optional name and extra arguments,
// and, when the backend has hosts, where the session runs.
type newDialog struct {
	choices []Choice
	loading bool
	pick    int
	field   int // dlgProvider…dlgWorktree
	dir     string
	name    string
	args    string
	// worktree starts the session in a new git worktree of the
	// directory's repository, on branch (muster/NAME when empty).
	worktree bool
	branch   string
	// completions are the directories the last tab offered.
	completions []string
	// dirTyped: the directory was typed into since the dialog opened or
	// the last completion. Tab completes what was typed, and moves on
	// from a directory it did not change.
	dirTyped bool
	err      string
	// hosts are the backend's hosts (HostCreator), host the one chosen:
	// 0 is this machine, i is hosts[i-1].
	hosts []string
	host  int
	// localDir is the directory offered for this machine; a host is
	// offered its home instead.
	localDir string
}

// fields is how many fields the dialog has: the host field only when
// there are hosts.
func (d *newDialog) fields() int {
	if len(d.hosts) > 0 {
		return dlgFields + 1
	}
	return dlgFields
}

// onHost is the host the session is to run on, "" for this machine.
func (d *newDialog) onHost() string {
	if d.host <= 0 || d.host > len(d.hosts) {
		return ""
	}
	return d.hosts[d.host-1]
}

// chooseHost moves the host choice by step, offering the chosen
// machine's own directory unless one was typed.
func (d *newDialog) chooseHost(step int) {
	n := len(d.hosts) + 1
	before := d.onHost()
	d.host = (d.host + step + n) % n
	switch {
	case before == "" && d.onHost() != "" && d.dir == d.localDir:
		d.dir = "~"
	case before != "" && d.onHost() == "" && d.dir == "~":
		d.dir = d.localDir
	}
	d.completions = nil
}

const (
	dlgProvider = iota
	dlgDir
	dlgName
	dlgArgs
	dlgWorktree
	dlgFields
	// dlgHost follows the others, there only with hosts (fields).
	dlgHost = dlgFields
)

type (
	choicesMsg struct {
		choices []Choice
		err     error
	}
	completeMsg struct {
		input      string // the text completed; a reply to older text is dropped
		result     string
		candidates []string
		isDir      bool // input names a directory that completion cannot extend
	}
	createdMsg struct {
		info proto.SessionInfo
		err  error
	}
)

// openNew opens the dialog and asks the backend for the choices.
func (m Model) openNew() (tea.Model, tea.Cmd) {
	m.dlg = &newDialog{loading: true, dir: tilde(m.startDir, m.home)}
	m.dlg.localDir = m.dlg.dir
	if _, ok := m.backend.(HostCreator); ok {
		for _, h := range m.hosts {
			m.dlg.hosts = append(m.dlg.hosts, h.Name)
		}
	}
	ctx, b := m.ctx, m.backend
	return m, func() tea.Msg {
		cs, err := b.Choices(ctx)
		return choicesMsg{cs, err}
	}
}

func (d *newDialog) chosen() (Choice, bool) {
	if d.pick < 0 || d.pick >= len(d.choices) {
		return Choice{}, false
	}
	return d.choices[d.pick], true
}

// dialogKey edits the dialog.
func (m Model) dialogKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	d := *m.dlg
	m.dlg = &d
	d.err = ""
	k := msg.String()
	switch k {
	case "esc", "ctrl+c":
		m.dlg = nil
		m.status, m.statusOK = "new session cancelled", true
		return m, nil
	case "enter":
		return m.create()
	case "shift+tab":
		d.field = (d.field + d.fields() - 1) % d.fields()
		d.completions = nil
		return m, nil
	case "tab":
		if d.field == dlgDir && d.onHost() == "" {
			return m, completeCmd(d.dir, m.home, !d.dirTyped)
		}
		// A host's directories are not this machine's to complete.
		d.field = (d.field + 1) % d.fields()
		return m, nil
	case "up", "down":
		if d.field == dlgProvider {
			d.pick = min(max(d.pick+map[string]int{"up": -1, "down": 1}[k], 0), max(len(d.choices)-1, 0))
			return m, nil
		}
		d.field = (d.field + d.fields() + map[string]int{"up": -1, "down": 1}[k]) % d.fields()
		return m, nil
	}
	if d.field == dlgHost {
		switch k {
		case "left", "h":
			d.chooseHost(-1)
		case "right", "l", "space":
			d.chooseHost(1)
		}
		return m, nil
	}
	if d.field == dlgProvider {
		switch k {
		case "j":
			d.pick = min(d.pick+1, max(len(d.choices)-1, 0))
		case "k":
			d.pick = max(d.pick-1, 0)
		}
		return m, nil
	}
	if d.field == dlgWorktree {
		return m, d.worktreeKey(k, msg)
	}
	field := map[int]*string{dlgDir: &d.dir, dlgName: &d.name, dlgArgs: &d.args}[d.field]
	switch k {
	case "backspace", "ctrl+h":
		r := []rune(*field)
		if len(r) > 0 {
			*field = string(r[:len(r)-1])
		}
	case "ctrl+u":
		*field = ""
	case "ctrl+w":
		t := strings.TrimRight(*field, " /")
		i := strings.LastIndexAny(t, " /")
		*field = (*field)[:i+1]
	default:
		if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
			*field += msg.Text
		}
	}
	if d.field == dlgDir {
		d.completions = nil
		d.dirTyped = true
	}
	return m, nil
}

// worktreeKey edits the worktree field: space turns the worktree on and
// off (a branch name has no spaces), typing a branch turns it on.
func (d *newDialog) worktreeKey(k string, msg tea.KeyPressMsg) tea.Cmd {
	switch k {
	case "space":
		d.worktree = !d.worktree
	case "backspace", "ctrl+h":
		r := []rune(d.branch)
		if len(r) > 0 {
			d.branch = string(r[:len(r)-1])
		}
	case "ctrl+u", "ctrl+w":
		d.branch = ""
	default:
		if msg.Text != "" && msg.Text != " " && msg.Mod&^tea.ModShift == 0 {
			d.branch += msg.Text
			d.worktree = true
		}
	}
	return nil
}

// create checks the dialog and asks the daemon for the session.
func (m Model) create() (tea.Model, tea.Cmd) {
	d := m.dlg
	c, ok := d.chosen()
	switch {
	case d.loading:
		d.err = "still looking for providers…"
		return m, nil
	case !ok:
		d.err = "choose what to run"
		return m, nil
	case !c.available() && d.onHost() == "":
		// PATH here says nothing of the host's: its muster answers there.
		d.err = c.Name + " is not installed: " + c.Install
		return m, nil
	}
	if on := d.onHost(); on != "" {
		return m.createOn(on, c)
	}
	dir := expandHome(strings.TrimSpace(d.dir), m.home)
	if dir == "" {
		d.err = "give a working directory"
		d.field = dlgDir
		return m, nil
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(m.startDir, dir)
	}
	a, ok := d.newArgs(filepath.Clean(dir), c)
	if !ok {
		return m, nil
	}
	if m.busy != "" {
		d.err = "busy: " + m.busy
		return m, nil
	}
	m.busy = "starting " + c.Name + "…"
	ctx, b := m.ctx, m.backend
	return m, func() tea.Msg {
		info, err := b.New(ctx, a)
		return createdMsg{info, err}
	}
}

// newArgs is the session the dialog describes, in dir, running c. An
// argument list that does not parse sets the dialog's error instead.
func (d *newDialog) newArgs(dir string, c Choice) (proto.NewArgs, bool) {
	args, err := shell.Fields(d.args, func(string) string { return "" })
	if err != nil {
		d.err = "extra arguments: " + err.Error()
		d.field = dlgArgs
		return proto.NewArgs{}, false
	}
	a := proto.NewArgs{Name: strings.TrimSpace(d.name), Dir: dir, Args: args}
	if d.worktree {
		a.Worktree = &proto.WorktreeArgs{Branch: strings.TrimSpace(d.branch)}
	}
	switch c.Kind {
	case "provider":
		a.Provider = c.Name
	case "launcher":
		a.Cmd, a.ResumeCmd = c.Command, c.Resume
	}
	return a, true
}

// createOn asks the backend for the session on a host. The directory is
// the host's, as typed: relative to its home, where ~ means that home too.
func (m Model) createOn(on string, c Choice) (tea.Model, tea.Cmd) {
	d := m.dlg
	a, ok := d.newArgs(strings.TrimSpace(d.dir), c)
	if !ok {
		return m, nil
	}
	if m.busy != "" {
		d.err = "busy: " + m.busy
		return m, nil
	}
	hc, ok := m.backend.(HostCreator)
	if !ok {
		d.err = "this dashboard cannot start sessions on hosts"
		return m, nil
	}
	m.busy = "starting " + c.Name + " on " + on + "…"
	ctx := m.ctx
	return m, func() tea.Msg {
		info, err := hc.NewOn(ctx, on, a)
		return createdMsg{info, err}
	}
}

// updateDialog applies the dialog's messages.
func (m Model) updateDialog(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case choicesMsg:
		if m.dlg == nil {
			return m, nil
		}
		d := *m.dlg
		m.dlg = &d
		d.loading = false
		if msg.err != nil {
			d.err = "providers: " + errorText(msg.err)
		}
		d.choices = msg.choices
		// Start on the first one that can run.
		d.pick = max(slices.IndexFunc(d.choices, Choice.available), 0)
	case completeMsg:
		if m.dlg == nil || m.dlg.dir != msg.input {
			return m, nil
		}
		d := *m.dlg
		m.dlg = &d
		d.dir, d.completions = msg.result, msg.candidates
		d.dirTyped = false
		if len(msg.candidates) == 0 && msg.result == msg.input {
			// Nothing to complete: tab moves on from a directory, and
			// says so otherwise.
			if msg.isDir {
				d.field = dlgName
			} else {
				d.err = "no directory matches"
			}
		}
	case createdMsg:
		m.busy = ""
		if msg.err != nil {
			if m.dlg != nil {
				d := *m.dlg
				m.dlg = &d
				d.err = errorText(msg.err)
			} else {
				m.status, m.statusOK = "new session: "+errorText(msg.err), false
			}
			return m, nil
		}
		m.dlg = nil
		m.selName = msg.info.Name
		m.attach = msg.info.Name
		return m, tea.Quit
	}
	return m, nil
}

// completeCmd completes a directory path from the file system: the one
// directory that matches, or the longest common prefix of several with
// them listed.
func completeCmd(input, home string, onFromDir bool) tea.Cmd {
	return func() tea.Msg {
		if onFromDir {
			// The directory the dialog offered or tab completed: tab
			// takes it and moves on, as it does in every other field.
			if st, err := os.Stat(expandHome(input, home)); err == nil && st.IsDir() {
				return completeMsg{input: input, result: input, isDir: true}
			}
		}
		res, cands := completeDir(input, home)
		msg := completeMsg{input: input, result: res, candidates: cands}
		if res == input && len(cands) == 0 {
			st, err := os.Stat(expandHome(input, home))
			msg.isDir = err == nil && st.IsDir()
		}
		return msg
	}
}

func completeDir(input, home string) (string, []string) {
	path := expandHome(input, home)
	parent, base := filepath.Split(path)
	if parent == "" {
		parent = "."
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return input, nil
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, base) || strings.HasPrefix(n, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if e.IsDir() {
			names = append(names, n)
		} else if e.Type()&os.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(parent, n)); err == nil && st.IsDir() {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return input, nil
	}
	// The input keeps its own spelling (~, relative) up to the part being
	// completed.
	head := input[:len(input)-len(base)]
	if len(names) == 1 {
		return head + names[0] + "/", nil
	}
	common := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, common) {
			common = common[:len(common)-1]
		}
	}
	return head + common, names
}

// expandHome turns a leading ~ into home.
func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return p
}

// Render draws the dialog in w×h cells.
func (d *newDialog) Render(w, h int) []string {
	label := func(i int, s string) string {
		if d.field == i {
			return styleBold.Styled("▸ " + cell(s, 10))
		}
		return "  " + cell(s, 10)
	}
	input := func(i int, v, placeholder string) string {
		v = termtext.Line(v)
		if d.field == i {
			return v + "▏" + styleFaint.Styled(placeholder)
		}
		if v == "" {
			return styleFaint.Styled(strings.TrimSpace(placeholder))
		}
		return v
	}
	lines := []string{styleBold.Styled("New session"), ""}
	lines = append(lines, label(dlgProvider, "Run"))
	switch {
	case d.loading:
		lines = append(lines, styleFaint.Styled("    looking for providers on PATH…"))
	case len(d.choices) == 0:
		lines = append(lines, styleFaint.Styled("    nothing to run"))
	}
	// The picker shows a window around the pick when the list is long.
	rows := max(h-13-(d.fields()-dlgFields), 3)
	off := window(0, d.pick, rows, len(d.choices))
	for i := off; i < min(off+rows, len(d.choices)); i++ {
		c := d.choices[i]
		mark := "    "
		if i == d.pick {
			mark = "  ▸ "
			if d.field == dlgProvider {
				mark = styleBold.Styled(mark)
			}
		}
		what := ""
		switch {
		case c.Kind == "launcher":
			what = "launcher: " + termtext.Line(c.Command)
		case c.Kind == "shell":
			what = "your shell, " + termtext.Line(c.Path)
		case c.Path != "":
			what = termtext.Line(c.Path)
		default:
			what = styleError.Styled("not installed: " + termtext.Line(c.Install))
		}
		name := cell(termtext.Line(c.Name), 12)
		if !c.available() {
			name = styleFaint.Styled(name)
		}
		lines = append(lines, mark+name+"  "+what)
	}
	lines = append(lines, "",
		label(dlgDir, "Directory")+"  "+input(dlgDir, d.dir, "  tab completes"))
	if len(d.completions) > 0 {
		shown := strings.Join(d.completions[:min(len(d.completions), 8)], "  ")
		if len(d.completions) > 8 {
			shown += fmt.Sprintf("  … %d more", len(d.completions)-8)
		}
		lines = append(lines, "              "+styleFaint.Styled(termtext.Line(shown)))
	}
	lines = append(lines,
		label(dlgName, "Name")+"  "+input(dlgName, d.name, "  generated when empty"),
		label(dlgArgs, "Arguments")+"  "+input(dlgArgs, d.args, "  passed to the program, shell-quoted"),
		label(dlgWorktree, "Worktree")+"  "+worktreeInput(d, input))
	if len(d.hosts) > 0 {
		names := append([]string{"this machine"}, d.hosts...)
		for i, n := range names {
			n = termtext.Line(n)
			if i == d.host {
				n = "[" + n + "]"
				if d.field == dlgHost {
					n = styleBold.Styled(n)
				}
			}
			names[i] = n
		}
		hint := ""
		if d.field == dlgHost {
			hint = styleFaint.Styled("  ←/→ choose")
		}
		lines = append(lines, label(dlgHost, "Host")+"  "+strings.Join(names, "  ")+hint)
	}
	lines = append(lines, "")
	if d.err != "" {
		lines = append(lines, styleError.Styled(termtext.Line(d.err)))
	}
	for i, l := range lines {
		lines[i] = fit(l, w)
	}
	return lines
}

// ChoicesFrom lists what the dialog offers, in order: the built-in
// providers (found ones first), the launchers, the shell. lookPath finds an
// executable as exec.LookPath does.
func ChoicesFrom(providers []ProviderLaunch, launchers []Choice, shellPath string, lookPath func(string) (string, error)) []Choice {
	var found, missing []Choice
	for _, p := range providers {
		c := Choice{Name: p.Name, Kind: "provider", Install: p.Install}
		for _, exe := range p.Executables {
			if path, err := lookPath(exe); err == nil {
				c.Path = path
				break
			}
		}
		if c.Path != "" {
			found = append(found, c)
		} else {
			missing = append(missing, c)
		}
	}
	out := append(found, launchers...)
	if shellPath != "" {
		out = append(out, Choice{Name: "shell", Kind: "shell", Path: shellPath})
	}
	return append(out, missing...)
}

// ProviderLaunch is what the dialog needs to know of a built-in provider.
type ProviderLaunch struct {
	Name        string
	Executables []string
	Install     string
}

// worktreeInput renders the worktree field: off, or on with its branch.
func worktreeInput(d *newDialog, input func(int, string, string) string) string {
	if !d.worktree {
		if d.field == dlgWorktree {
			return "[ ] " + styleFaint.Styled("space or a branch name: a new git worktree of the directory's repository")
		}
		return "[ ] " + styleFaint.Styled("off")
	}
	return "[x] branch " + input(dlgWorktree, d.branch, "  muster/NAME when empty")
}
