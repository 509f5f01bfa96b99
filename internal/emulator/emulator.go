// Package emulator owns the headless terminal behind each pane: it keeps the
// screen, scrollback, cursor and modes that an attaching client needs to be
// repainted, and renders them. It wraps charmbracelet/x/vt behind a small
// interface so the backend can change. One goroutine owns a Terminal (the
// pane's emulator goroutine); the only call that may run beside it is a
// read of Replies, which Close ends.
package emulator

import (
	"io"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// Terminal is what a pane needs from a headless emulator.
type Terminal interface {
	// Write feeds program output. OSC titles must already be stripped (the
	// pane's scanner owns them, see SetTitle).
	Write(p []byte)
	Resize(cols, rows int)
	Size() (cols, rows int)
	// SetTitle records the title the scanner saw, for snapshots.
	SetTitle(title string)
	Title() string
	// AltScreen reports whether the program is on its alternate screen.
	AltScreen() bool
	// Snapshot renders an escape sequence that repaints a client terminal
	// of cols×rows into the emulator's state: the screen (clipped to the
	// client, the rest cleared), cursor position and style, margins and
	// every mode a program can set. A size of 0 means the emulator's.
	Snapshot(cols, rows int) []byte
	// Text is the screen as plain text, optionally preceded by up to
	// scrollback lines of history; ansi keeps colours.
	Text(scrollback int, ansi bool) string
	// Replies yields the emulator's answers to terminal queries (DA, CPR,
	// OSC 11…); it must be drained or Write blocks.
	Replies() io.Reader
	Close()
}

// Limits bounds a terminal's history (its scrollback).
type Limits struct {
	// Lines is the most lines kept; 0 means vt.DefaultScrollbackSize.
	Lines int
	// Bytes is the most bytes of history kept, counted as the lines' text
	// with styles plus 16 bytes a line; 0 means DefaultScrollbackBytes.
	Bytes int
}

type vtTerminal struct {
	emu   *vt.Emulator
	title string
	hist  *history
	st    state
}

// New returns an x/vt-backed terminal of the given size whose history is
// kept compactly (see history) within lim.
func New(cols, rows int, lim Limits) Terminal {
	if lim.Lines <= 0 {
		lim.Lines = vt.DefaultScrollbackSize
	}
	t := &vtTerminal{emu: vt.NewEmulator(cols, rows), hist: newHistory(lim.Lines, lim.Bytes)}
	// Each line that leaves the top of the main screen is rendered into
	// the history as it goes (third_party/x/vt's sink): x/vt neither
	// clones its cells nor keeps them.
	t.emu.Scrollback().SetSink(func(l uv.Line) { t.hist.push(l.Render()) })
	t.st.reset()
	t.track()
	return t
}

func (t *vtTerminal) Write(p []byte) {
	defer func() {
		if r := recover(); r != nil {
			t.recovered()
		}
	}()
	t.emu.Write(p)
}

// recovered follows a panic of x/vt on output its handlers do not bound
// (as CSI ;100 r then CSI T did before third_party's patch): a program's
// output must not take down the daemon and every pane with it. A soft
// reset (DECSTR) puts margins and modes back within the screen; the rest
// of the chunk is lost, and the program's next output draws on.
func (t *vtTerminal) recovered() {
	defer func() { recover() }()
	t.emu.Write([]byte("\x1b[!p"))
}

func (t *vtTerminal) Resize(cols, rows int) {
	if cols <= 0 || rows <= 0 {
		return
	}
	t.emu.Resize(cols, rows)
	// x/vt gives both screens full-size margins on a resize.
	t.st.margins = [2]margins{}
}

func (t *vtTerminal) Size() (int, int) { return t.emu.Width(), t.emu.Height() }

func (t *vtTerminal) SetTitle(title string) { t.title = title }
func (t *vtTerminal) Title() string         { return t.title }

func (t *vtTerminal) AltScreen() bool { return t.emu.IsAltScreen() }

func (t *vtTerminal) Replies() io.Reader { return t.emu }

// Close ends the replies stream. It closes x/vt's reply pipe rather than
// calling Emulator.Close, which sets an unguarded flag that Emulator.Read
// checks: the pane closes the terminal on its emulator goroutine while
// another goroutine is blocked reading replies, and io.PipeWriter is safe
// for that where the flag is a data race.
func (t *vtTerminal) Close() {
	t.hist.release()
	if pw, ok := t.emu.InputPipe().(*io.PipeWriter); ok {
		pw.CloseWithError(io.EOF)
		return
	}
	t.emu.Close()
}

// sanitizeTitle drops control bytes so a title cannot end our OSC early.
func sanitizeTitle(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

func (t *vtTerminal) Text(scrollback int, withANSI bool) string {
	var b strings.Builder
	if scrollback > 0 {
		for _, line := range t.hist.last(scrollback) {
			if withANSI {
				b.WriteString(line)
			} else {
				b.WriteString(strings.TrimRight(ansi.Strip(line), " "))
			}
			b.WriteByte('\n')
		}
	}
	var screen string
	if withANSI {
		screen = t.emu.Render()
	} else {
		screen = t.emu.String()
	}
	lines := strings.Split(screen, "\n")
	for i := range lines {
		if !withANSI {
			lines[i] = strings.TrimRight(lines[i], " ")
		}
	}
	// Trailing blank rows carry nothing; capture-pane drops them too.
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// Export is what a new daemon image needs to rebuild this terminal
// exactly (see Restore): every line of history as stored (rendered with
// its styles) and a snapshot of the screen, cursor and modes. The title
// is left out: the pane carries it, and OSC titles must not reach Write.
func Export(t Terminal) (history []string, screen []byte) {
	vt, ok := t.(*vtTerminal)
	if !ok {
		return nil, t.Snapshot(0, 0)
	}
	title := vt.title
	vt.title = ""
	screen = vt.Snapshot(0, 0)
	vt.title = title
	return vt.hist.last(vt.hist.len()), screen
}

// Restore fills a new terminal of the exported one's size with what
// Export returned: the history lines go in as they were stored (no line
// is re-rendered, so none changes), then the snapshot repaints the screen
// and sets the cursor and every mode.
func Restore(t Terminal, history []string, screen []byte) {
	if vt, ok := t.(*vtTerminal); ok {
		for _, line := range history {
			vt.hist.push(line)
		}
	}
	t.Write(screen)
}
