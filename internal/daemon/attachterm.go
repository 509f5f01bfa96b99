package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/attachterm"
	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/pane"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/rawio"
)

// heldTerminal is the user's terminal, passed by an attach client
// (AttachArgs.Terminal), while the daemon writes the pane to it and reads
// its keys itself. That takes the client process out of the path of every
// keystroke and its echo, as tmux's server writes to the terminal its
// client passed it: two process wake-ups fewer per echo (bench/corebench,
// issue 11). Copy mode runs here too (attachcopy.go), so the daemon is the
// one owner of the terminal, as tmux's server is. It hands the terminal
// back to the client, over the socket, only for what must run in the
// client's process: detaching and the pane's exit (the client restores
// the user's screen) and copy mode's pager or editor (HandbackOpen).
type heldTerminal struct {
	f  *os.File
	rc syscall.RawConn
	c  *pane.Client
	// input takes the user's keys for the pane; it reports whether they
	// were taken (false for a read-only client).
	input func([]byte)

	filter attachterm.Filter
	keys   attachterm.Keys
	// escape is how long a read ending in the start of a sequence waits
	// for its rest (attachterm.DefaultEscapeTime).
	escape time.Duration
	hint   string
	// notice is how other sessions' new attention items are shown (nil:
	// the client asked for none).
	notice *proto.AttachNotice

	mu sync.Mutex
	// on: the daemon has the terminal; output frames and direct writes
	// go to it.
	on bool
	// sink is the pane client's sink of direct writes to the terminal;
	// socket holds the sinks of direct writes to the socket.
	sink   uint64
	socket map[uint64]bool
	// reading is closed when the reader of the terminal returns.
	reading chan struct{}
	// socketDirect is the pane client's direct writer for the socket.
	socketDirect pane.DirectWriter
	// quit is closed by release: a reader waiting for the client (copy
	// mode's pager) stops waiting.
	quit chan struct{}

	// Copy mode (attachcopy.go). cm is read and written by the reader
	// only; copying, under mu, says it has the terminal: the pane's
	// output goes to the socket (the client drops it) and notices only
	// ring. history is the pane's text for it (nil: none may be read);
	// tempDir is where its pager's file is written; opening, under mu,
	// says the reader waits for the client's FrameResume on opened.
	cm      *attachterm.CopyMode
	copying bool
	history func() string
	tempDir string
	opening bool
	opened  chan string
}

// holdTerminal makes fd, the passed descriptor, the attach's terminal: it
// must be a terminal, and the keys of a must parse. It owns fd: on error,
// fd is closed.
func holdTerminal(fd int, a proto.AttachArgs) (*heldTerminal, error) {
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("the passed file is not a terminal: %w", err)
	}
	detach, err := config.ParseKey(a.DetachKey)
	var cp config.Key
	if err == nil && a.CopyKey != "" {
		cp, err = config.ParseKey(a.CopyKey)
	}
	if err == nil {
		// The client opened the terminal anew for the daemon: O_NONBLOCK
		// stays off the description the user's shell shares.
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	// Never pf.Fd(): it would put the terminal back in blocking mode.
	pf := os.NewFile(uintptr(fd), "terminal")
	rc, err := pf.SyscallConn()
	if err != nil {
		pf.Close()
		return nil, err
	}
	t := &heldTerminal{f: pf, rc: rc, hint: a.Hint, notice: a.Notice, socket: map[uint64]bool{}, escape: a.EscapeTime(), opened: make(chan string, 1)}
	mouse := attachterm.NewMouse(a.Mouse)
	t.filter.Mouse = mouse
	t.keys = attachterm.Keys{Detach: detach, Copy: cp, Mouse: mouse}
	// The user's screen is put away here, after every check and before
	// the client hears of success, so that a refused attach leaves the
	// terminal untouched. A terminal that does not read (XOFF) fails the
	// attach instead of holding it.
	pf.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err = rawio.Write(rc, []byte(attachterm.Enter+mouse.Start()))
	pf.SetWriteDeadline(time.Time{})
	if err != nil {
		pf.Close()
		return nil, err
	}
	return t, nil
}

// direct is the pane client's direct writer for the terminal: output
// filtered for it, written without waiting.
func (t *heldTerminal) direct(p []byte) []byte {
	out := t.filter.Filter(p)
	return out[rawio.TryWrite(t.rc, out):]
}

// take gives the terminal to the daemon: output goes to it, and its keys
// are read, until hand or release.
func (t *heldTerminal) take() {
	t.f.SetReadDeadline(time.Time{})
	t.f.SetWriteDeadline(time.Time{})
	t.mu.Lock()
	t.on = true
	t.sink = t.c.SetDirect(t.direct, false)
	t.reading = make(chan struct{})
	t.quit = make(chan struct{})
	t.cm, t.copying, t.opening = nil, false, false
	t.mu.Unlock()
	go t.read()
}

// release stops writing to and reading from the terminal: when it
// returns, nothing more of the pane reaches it. A write blocked on a
// terminal that does not read ends at the deadline.
func (t *heldTerminal) release() {
	t.f.SetWriteDeadline(time.Now())
	t.f.SetReadDeadline(time.Now())
	t.mu.Lock()
	reading := t.reading
	t.toSocketLocked()
	if t.quit != nil {
		close(t.quit)
		t.quit = nil
		// Copy mode may have lifted the deadline above, back from its
		// pager, before this took the lock.
		t.f.SetWriteDeadline(time.Now())
	}
	t.mu.Unlock()
	if reading != nil {
		<-reading
	}
}

// toSocketLocked turns the pane's output back to the socket, if the
// terminal had it; t.mu is held.
func (t *heldTerminal) toSocketLocked() {
	if t.on {
		t.on = false
		t.socket[t.c.SetDirect(t.socketDirect, true)] = true
	}
}

// hand releases the terminal and tells the client it has it, and why.
func (t *heldTerminal) hand(hb proto.Handback) {
	t.f.SetWriteDeadline(time.Now())
	t.mu.Lock()
	t.toSocketLocked()
	t.mu.Unlock()
	payload, _ := json.Marshal(hb)
	t.c.Notify(proto.FrameHandback, payload)
}

// read reads the user's keys until the daemon stops reading or the
// detach key hands the terminal back.
func (t *heldTerminal) read() {
	defer close(t.reading)
	buf := make([]byte, 32<<10)
	for {
		n, err := rawio.Read(t.rc, buf)
		if n > 0 && t.keysIn(buf[:n]) {
			return
		}
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				// The terminal is gone (its client died with it).
				t.hand(proto.Handback{Reason: proto.HandbackDetach})
			}
			return
		}
	}
}

// readable reports whether the terminal has more input within the escape
// time.
func (t *heldTerminal) readable() bool {
	ok := true
	t.rc.Control(func(fd uintptr) { ok = rawio.Readable(fd, t.escape) })
	return ok
}

// write writes f to the terminal when it is the terminal's and reports
// whether it took it (written or dropped); frames it does not take go to
// the socket.
func (t *heldTerminal) write(f pane.Frame) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch f.Type {
	case pane.FrameRaw:
		if t.socket[f.Sink] {
			return false
		}
		if t.on && f.Sink == t.sink {
			rawio.Write(t.rc, f.Data)
		}
		// Else the rest of a write to the terminal before a handback:
		// the next repaint covers it.
		return true
	case proto.FrameOutput, proto.FrameSnapshot:
		if !t.on {
			return false
		}
		if _, err := rawio.Write(t.rc, t.filter.Filter(f.Data)); err != nil {
			return true
		}
		if f.Type == proto.FrameSnapshot && t.hint != "" {
			_, rows := t.size()
			rawio.Write(t.rc, []byte(attachterm.Hint(t.hint, rows)))
			t.hint = ""
		}
		return true
	case proto.FrameNotice:
		return t.drawNotice(f.Data)
	}
	return false
}

// size is the terminal's width and height, for the lines drawn over its
// bottom row.
func (t *heldTerminal) size() (cols, rows int) {
	cols, rows = proto.DefaultCols, proto.DefaultRows
	t.rc.Control(func(fd uintptr) {
		if ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ); err == nil && ws.Row > 0 && ws.Col > 0 {
			cols, rows = int(ws.Col), int(ws.Row)
		}
	})
	return cols, rows
}
