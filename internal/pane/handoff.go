package pane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/emulator"
	"github.com/musterhq/muster/internal/proto"
)

// Frozen is a pane handed from one daemon image to the next (the daemon's
// restart): its program keeps running, and the PTY master stays open under
// the descriptor FD, which survives exec. Everything the reader had read
// is in it; what the program wrote since is still in the kernel's buffer,
// for the adopting pane's reader.
type Frozen struct {
	PID       int      `json:"pid"`
	FD        int      `json:"fd"`
	Cols      int      `json:"cols"`
	Rows      int      `json:"rows"`
	Title     string   `json:"title,omitempty"`
	Seq       uint64   `json:"seq"`
	Ring      []byte   `json:"ring,omitempty"`
	RingSize  int      `json:"ring_size"`
	LastInput int64    `json:"last_input,omitempty"`
	Answers   []byte   `json:"answers,omitempty"`
	AltScreen bool     `json:"alt_screen,omitempty"`
	Screen    []byte   `json:"screen"`
	History   []string `json:"history,omitempty"`
}

// Attached is how many clients are attached to the pane now.
func (p *Pane) Attached() int { return int(p.attached.Load()) }

// ErrReaped is Freeze's answer for a pane whose program this daemon image
// has already reaped: it cannot be handed over, and its exit is recorded
// as usual.
var ErrReaped = errors.New("the pane's program has exited")

// Freeze stops the pane's goroutines without ending its program and
// returns its state, with a descriptor of the PTY master that survives
// exec. The reader stops first, so every byte it read is in the ring and
// the emulator before the emulator is exported. A frozen pane is done
// with: nothing reads it or writes to it again in this image.
func (p *Pane) Freeze(ctx context.Context) (Frozen, error) {
	p.mu.Lock()
	if p.reaping || p.exited {
		p.mu.Unlock()
		return Frozen{}, ErrReaped
	}
	if p.rc == nil {
		p.mu.Unlock()
		return Frozen{}, errors.New("its terminal is not a descriptor of the poller, so its reader cannot be stopped")
	}
	p.frozen = true
	p.mu.Unlock()
	// A read deadline in the past wakes the reader from the poller with
	// an error, ending readLoop; nothing is read and dropped.
	if err := p.ptmx.SetReadDeadline(time.Now()); err != nil {
		return Frozen{}, fmt.Errorf("stop the reader: %w", err)
	}
	select {
	case <-p.readerDone:
	case <-ctx.Done():
		return Frozen{}, fmt.Errorf("stop the reader: %w", ctx.Err())
	}
	p.mu.Lock()
	for c := range p.clients {
		c.close()
	}
	p.clients = map[*Client]struct{}{}
	f := Frozen{
		PID: p.pid, Cols: p.cols, Rows: p.rows, Title: p.title, Seq: p.seq,
		Ring: p.ring.Tail(len(p.ring.buf)), RingSize: len(p.ring.buf), LastInput: p.lastInput.Load(),
	}
	p.mu.Unlock()
	type export struct {
		history []string
		screen  []byte
		alt     bool
	}
	res := make(chan export, 1)
	p.emu.pushFunc(func(t terminal) {
		h, s := emulator.Export(t)
		res <- export{h, s, t.AltScreen()}
	})
	select {
	case e := <-res:
		f.History, f.Screen, f.AltScreen = e.history, e.screen, e.alt
	case <-ctx.Done():
		return Frozen{}, fmt.Errorf("export the screen: %w", ctx.Err())
	}
	p.ansMu.Lock()
	f.Answers = append([]byte(nil), p.answers...)
	p.ansMu.Unlock()
	var fd int
	var derr error
	if err := p.rc.Control(func(raw uintptr) { fd, derr = unix.FcntlInt(raw, unix.F_DUPFD, 3) }); err != nil {
		derr = err
	}
	if derr != nil {
		return Frozen{}, fmt.Errorf("keep the terminal across exec: %w", derr)
	}
	f.FD = fd
	// The emulator goroutine ends, and the reply loop with it; waitLoop
	// stays in its wait, which exec ends.
	p.emu.close()
	return f, nil
}

// Adopt makes a pane of a program a previous daemon image started and
// froze (Freeze). The program is this process's child still, so its exit
// is reaped here as a started pane's is. cfg's Argv, Dir, Env and size are
// not used. It takes ownership of f.FD.
func Adopt(cfg Config, f Frozen) (*Pane, error) {
	if f.PID <= 0 || f.FD < 3 {
		return nil, fmt.Errorf("bad frozen pane: pid %d, descriptor %d", f.PID, f.FD)
	}
	if !proto.ValidSize(f.Cols, f.Rows) {
		return nil, fmt.Errorf("bad frozen pane: size %dx%d", f.Cols, f.Rows)
	}
	if _, err := unix.IoctlGetInt(f.FD, unix.TIOCGPTN); err != nil {
		return nil, fmt.Errorf("descriptor %d is not a terminal master: %w", f.FD, err)
	}
	proc, err := os.FindProcess(f.PID)
	if err != nil {
		return nil, fmt.Errorf("find process %d: %w", f.PID, err)
	}
	if cfg.Scrollback <= 0 {
		cfg.Scrollback = defaultScrollback
	}
	cfg.RingSize = max(f.RingSize, len(f.Ring))
	if cfg.RingSize <= 0 {
		cfg.RingSize = defaultRing
	}
	if !ValidWindowSize(cfg.WindowSize) {
		cfg.WindowSize = WindowLatest
	}
	cfg.Cols, cfg.Rows = f.Cols, f.Rows
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	unix.CloseOnExec(f.FD)
	ptmx := os.NewFile(uintptr(f.FD), "/dev/ptmx")
	ptmx, polled, err := pollable(ptmx)
	if err != nil {
		return nil, fmt.Errorf("poll the terminal: %w", err)
	}
	var rc syscall.RawConn
	if polled {
		rc, _ = ptmx.SyscallConn()
	}
	term := emulator.New(f.Cols, f.Rows, emulator.Limits{Lines: cfg.Scrollback, Bytes: cfg.ScrollbackBytes})
	emulator.Restore(term, f.History, f.Screen)
	term.SetTitle(f.Title)
	p := &Pane{
		cfg:        cfg,
		logger:     logger,
		proc:       proc,
		ptmx:       ptmx,
		rc:         rc,
		pid:        f.PID,
		ring:       newRing(cfg.RingSize),
		clients:    map[*Client]struct{}{},
		cols:       f.Cols,
		rows:       f.Rows,
		title:      f.Title,
		seq:        f.Seq,
		emu:        newEmuQueue(),
		term:       term,
		readerDone: make(chan struct{}),
		done:       make(chan struct{}),
		closed:     make(chan struct{}),
	}
	p.ring.Write(f.Ring)
	p.emuDone = f.Seq
	p.emuSeq.Store(f.Seq)
	p.lastInput.Store(f.LastInput)
	p.wg.Add(4)
	go p.readLoop()
	go p.waitLoop()
	go p.emulatorLoop()
	go p.replyLoop()
	if len(f.Answers) > 0 {
		p.answer(f.Answers)
	}
	return p, nil
}
