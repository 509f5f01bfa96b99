package daemon

import (
	"errors"
	"time"

	"github.com/musterhq/muster/internal/attachterm"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/rawio"
	"github.com/musterhq/muster/internal/termtext"
)

// copyModeLines is the most history copy mode shows.
const copyModeLines = 100000

// keysIn handles one read of the user's input on the held terminal: the
// key scan (attachterm.Keys) sends keys to the pane or to copy mode,
// opens copy mode (the copy key, the wheel turned up) and leaves it. It
// reports whether the detach key handed the terminal back.
func (t *heldTerminal) keysIn(p []byte) (handed bool) {
	data, wheels := t.keys.Split(p)
	for _, w := range wheels {
		if t.cm == nil {
			if w != attachterm.WheelUp {
				continue
			}
			t.startCopy(true)
		}
		t.cm.Wheel(w)
		if t.cm.Over() {
			t.leaveCopy(nil)
		} else {
			t.cm.Draw()
		}
	}
	if t.keys.Pending() && !t.readable() {
		// Nothing completed the sequence: a lone Esc.
		data = append(data, t.keys.Flush()...)
	}
	if len(data) == 0 {
		return false
	}
	before, act, rest := t.keys.Find(data, t.cm != nil)
	if t.cm != nil {
		over, after := t.cm.Feed(before)
		if act == attachterm.Detach {
			t.hand(proto.Handback{Reason: proto.HandbackDetach})
			return true
		}
		if over {
			t.leaveCopy(after)
		}
		return false
	}
	if len(before) > 0 {
		t.input(before)
	}
	switch act {
	case attachterm.Detach:
		t.hand(proto.Handback{Reason: proto.HandbackDetach})
		return true
	case attachterm.Copy:
		t.startCopy(false)
		if over, after := t.cm.Feed(rest); over {
			t.leaveCopy(after)
		}
	}
	return false
}

// startCopy gives the terminal to copy mode, on the pane's history: the
// pane's output stops reaching it (it goes to the socket, which the
// client drops while the daemon holds the terminal).
func (t *heldTerminal) startCopy(fromWheel bool) {
	t.mu.Lock()
	t.toSocketLocked()
	t.copying = true
	t.mu.Unlock()
	text := ""
	if t.history != nil {
		text = t.history()
	}
	cols, rows := t.size()
	t.cm = attachterm.NewCopyMode(heldWriter{t}, text, cols, rows)
	t.cm.FromWheel = fromWheel
	t.cm.TempDir = t.tempDir
	t.cm.Open = t.openInClient
}

// leaveCopy gives the terminal back to the pane and repaints it; rest is
// what was typed after the key that left, for the pane.
func (t *heldTerminal) leaveCopy(rest []byte) {
	t.cm = nil
	rawio.Write(t.rc, []byte("\x1b[0m\x1b[H\x1b[2J"))
	if len(rest) > 0 {
		t.input(rest)
	}
	t.mu.Lock()
	t.copying = false
	if !t.on {
		t.on = true
		t.sink = t.c.SetDirect(t.direct, false)
	}
	t.mu.Unlock()
	t.c.Repaint()
}

// openInClient is copy mode's Open: the user's pager or editor runs in
// the client's process, with the client's environment, on the user's
// terminal, which the daemon neither reads nor writes until the client
// says it is done (FrameResume, resumeOpen), with what went wrong if
// anything did.
func (t *heldTerminal) openInClient(file string, editor bool) error {
	t.mu.Lock()
	quit := t.quit
	t.opening = true
	t.mu.Unlock()
	t.hand(proto.Handback{Reason: proto.HandbackOpen, File: file, Editor: editor})
	select {
	case msg := <-t.opened:
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.quit != quit {
			// Released meanwhile: nothing more may reach the terminal.
			return errors.New("the client left")
		}
		// hand cut short a write blocked on the terminal; copy mode
		// writes again now.
		t.f.SetWriteDeadline(time.Time{})
		if msg != "" {
			return errors.New(msg)
		}
		return nil
	case <-quit:
		return errors.New("the client left")
	}
}

// resumeOpen passes the client's FrameResume, whose payload says what
// went wrong with the pager, to a copy mode waiting for it; one that no
// copy mode waits for is ignored.
func (t *heldTerminal) resumeOpen(payload []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.opening {
		t.opening = false
		t.opened <- termtext.Line(string(payload))
	}
}

// heldWriter writes copy mode to the held terminal.
type heldWriter struct{ t *heldTerminal }

func (w heldWriter) Write(p []byte) (int, error) { return rawio.Write(w.t.rc, p) }
