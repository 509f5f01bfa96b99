package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/muesli/cancelreader"
	"golang.org/x/term"

	"github.com/musterhq/muster/internal/attachterm"
	"github.com/musterhq/muster/internal/proto"
)

// restoreSequence undoes every mode a program may have left on the client
// terminal, so that detaching returns a usable shell. It opens with CAN,
// which abandons an escape sequence that pane output left half written,
// and ends by leaving the alternate screen and popping the title that
// attachterm.Enter pushed (CSI 23 t).
const restoreSequence = "\x18\x1b[r\x1b[0m\x1b[?25h\x1b[0 q" +
	"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?9l" +
	"\x1b[?2004l\x1b[?1004l\x1b[?1l\x1b>\x1b[<99u\x1b[>4;0m\x1b[?1049l\x1b[23;0t"

// attachTerminal is the user's terminal as the attach client keeps it: in
// raw mode from before the attach request, so that keys typed while the
// daemon answers reach the pane and not the line discipline (Ctrl-\ would
// be SIGQUIT), and put back as it was when the attach ends.
type attachTerminal struct {
	fd  int
	old *term.State
	// out is where the pane goes: the plain stdout, which no poller
	// watches, until this client turns out to relay the pane (relay).
	out      io.Writer
	closeOut func()
	// pane is out, gated: restore shuts it.
	pane *gatedWriter
	// entered is set once the user's screen was put away (by the daemon
	// or by relay): restore then brings it back.
	entered bool
	once    sync.Once
}

// rawTerminal puts stdin's terminal in raw mode; out is the process's
// stdout.
func rawTerminal(out io.Writer) (*attachTerminal, error) {
	fd := int(os.Stdin.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return nil, err
	}
	return &attachTerminal{fd: fd, old: old, out: out, closeOut: func() {}, pane: &gatedWriter{w: out}}, nil
}

// relay makes this client the writer of the pane: through a descriptor of
// its poller (terminalOut), which it must not hold while the daemon holds
// the terminal (it would wake this process on every key and echo), and on
// the alternate screen, with mouse the client's own mouse start.
func (t *attachTerminal) relay(mouse string) {
	t.out, t.closeOut = terminalOut(t.out)
	t.pane.w = t.out
	io.WriteString(t.out, attachterm.Enter+mouse)
}

// restore stops the pane's output and gives the user back their screen
// and terminal modes; it acts once.
func (t *attachTerminal) restore() {
	t.once.Do(func() {
		t.pane.close()
		if t.entered {
			io.WriteString(t.out, restoreSequence)
		}
		term.Restore(t.fd, t.old)
	})
}

// close closes what relay opened; it comes after restore and after the
// last line printed on the user's screen.
func (t *attachTerminal) close() { t.closeOut() }

// suspend and resume lend the terminal to a program of copy mode's (the
// pager) in its normal mode, then take it back on the alternate screen.
func (t *attachTerminal) suspend() { term.Restore(t.fd, t.old) }

func (t *attachTerminal) resume() {
	term.MakeRaw(t.fd)
	io.WriteString(t.pane, "\x1b[?1049h")
}

// openInProgram shows file in the user's $PAGER (less) or, with editor,
// $EDITOR (vi), with the terminal in its normal mode meanwhile: copy
// mode's o and e.
func (t *attachTerminal) openInProgram(file string, editor bool) error {
	prog, fallback := os.Getenv("PAGER"), "less"
	if editor {
		prog, fallback = os.Getenv("EDITOR"), "vi"
	}
	if prog == "" {
		prog = fallback
	}
	argv := append(strings.Fields(prog), file)
	t.suspend()
	defer t.resume()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", prog, err)
	}
	return nil
}

// gatedWriter writes pane output to the user's terminal until it is shut:
// after shut returns, nothing more of the pane reaches the terminal, even
// a frame that was being read when the detach key was pressed.
type gatedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	shut bool
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		return len(p), nil
	}
	return g.w.Write(p)
}

// close waits for a write in progress, then stops all later ones.
func (g *gatedWriter) close() {
	g.mu.Lock()
	g.shut = true
	g.mu.Unlock()
}

// termSize is the size to give a pane: the user's terminal, brought into
// the daemon's range (proto.ClampSize), so that a terminal larger than
// proto.MaxTermSize still attaches and shows the pane's top-left corner
// instead of being refused.
func termSize() (int, int) {
	for _, fd := range []int{int(os.Stdout.Fd()), int(os.Stdin.Fd())} {
		if w, h, err := term.GetSize(fd); err == nil && w > 0 && h > 0 {
			return proto.ClampSize(w, h)
		}
	}
	return proto.DefaultCols, proto.DefaultRows
}

// keyReader is a relaying attach client's reader of the user's keys; a
// daemon that holds the terminal reads them itself.
type keyReader struct {
	mu      sync.Mutex
	r       cancelreader.CancelReader
	stopped bool
}

// open returns the reader, opening it if it is not open.
func (k *keyReader) open() (cancelreader.CancelReader, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return nil, cancelreader.ErrCanceled
	}
	if k.r == nil {
		r, err := openKeys(os.Stdin)
		if err != nil {
			return nil, err
		}
		k.r = r
	}
	return k.r, nil
}

// stop ends a read in progress and every later open.
func (k *keyReader) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	if k.r != nil {
		k.r.Cancel()
		k.r.Close()
		k.r = nil
	}
}
