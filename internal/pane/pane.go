// Package pane owns one pseudo-terminal and the process group running in it:
// the blocking reader goroutine, the raw output ring, raw fan-out to attached
// clients, and the headless emulator fed behind a bounded queue, on its own
// goroutine or, for a small chunk while that goroutine is idle, by the
// reader once the clients have the chunk. Nothing on the output path waits
// for a slow emulator or a slow client: the emulator is rebuilt from the
// ring and a client is resynchronised with a fresh snapshot instead.
package pane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/emulator"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/rawio"
	"github.com/musterhq/muster/internal/termsignal"
)

// Config describes the process to start in a new pane.
type Config struct {
	Argv       []string
	Dir        string
	Env        []string
	Cols, Rows int
	// Scrollback is the emulator's history in lines.
	Scrollback int
	// ScrollbackBytes bounds the emulator's history in bytes (0: the
	// emulator's default, emulator.DefaultScrollbackBytes).
	ScrollbackBytes int
	// RingSize is the raw output kept for emulator rebuilds.
	RingSize int
	// Scanner sees every output chunk before the emulator; it returns the
	// bytes the emulator should get and may report a new title. Nil passes
	// output through unchanged.
	Scanner Scanner
	// FilterClients strips from attached clients' output the sequences
	// Muster consumes (termsignal.NewClientFilter: agent statuses and
	// their query, OSC 9;4, notifications); without it clients get the
	// program's bytes unchanged.
	FilterClients bool
	Logger        *slog.Logger
	// OnExit runs once, after the process exited and its output drained.
	OnExit func(exitCode int)
	// WindowSize is how the pane's size follows its writable clients, as
	// tmux's window-size option: WindowLatest (the default), WindowSmallest
	// or WindowLargest.
	WindowSize string
}

// Window-size policies (Config.WindowSize).
const (
	// WindowLatest: the size of the client that typed or attached last.
	WindowLatest = "latest"
	// WindowSmallest: the smallest columns and rows of any writable client.
	WindowSmallest = "smallest"
	// WindowLargest: the largest columns and rows of any writable client.
	WindowLargest = "largest"
)

// ValidWindowSize reports whether s names a window-size policy.
func ValidWindowSize(s string) bool {
	return s == WindowLatest || s == WindowSmallest || s == WindowLargest
}

// Scanner filters output ahead of the emulator (the terminal-signal
// scanner). It runs on the reader goroutine, so it must be fast.
type Scanner interface {
	Scan(p []byte) (filtered []byte, title string, titleChanged bool)
}

// Answerer is a Scanner that answers queries of the program itself (the
// daemon answers Claude Code's OSC 7501;?, which no user's terminal is
// asked). Answer returns what to write to the program after the last Scan,
// nil for nothing. Unlike the emulator's replies, these are written whether
// or not a client is attached.
type Answerer interface {
	Answer() []byte
}

// ErrExited is returned when writing to a pane whose process has exited.
var ErrExited = errors.New("the pane's process has exited")

const (
	defaultScrollback = 10000
	// defaultRing is the raw output kept: a rebuild replays rebuildBytes of
	// it, and nothing else reads it, so more would be memory no one uses.
	defaultRing = rebuildBytes
	// emuQueueBytes bounds output waiting for the emulator; beyond it the
	// emulator is marked dirty and rebuilt from the ring.
	emuQueueBytes = 256 << 10
	// rebuildBytes is how much of the ring a rebuilt emulator replays.
	rebuildBytes = 128 << 10
	// clientQueueBytes bounds output queued for one client before it is
	// dropped and resynchronised with a snapshot.
	clientQueueBytes = 4 << 20
)

// Pane is one running (or exited) program in a PTY.
type Pane struct {
	cfg    Config
	logger *slog.Logger
	// proc is the program's process: started by this pane, or adopted
	// from an earlier daemon image (Adopt).
	proc *os.Process
	ptmx *os.File
	// rc reads and writes ptmx with raw system calls (rawio) when it is a
	// descriptor of the poller; nil where it stays blocking.
	rc  syscall.RawConn
	pid int

	inputMu sync.Mutex

	mu       sync.Mutex
	seq      uint64 // total output bytes read
	ring     *ring
	clients  map[*Client]struct{}
	leader   *Client
	seen     uint64 // the last Client.seen given out
	cols     int
	rows     int
	exited   bool
	exitCode int
	title    string
	// frozen: the pane is being handed to a new daemon image (Freeze);
	// its program is not reaped here, so that the new image can. reaping:
	// waitLoop is reaping it, too late for that.
	frozen  bool
	reaping bool

	attached  atomic.Int32
	lastInput atomic.Int64 // Unix nanoseconds of the last Write
	answering atomic.Bool  // a goroutine is writing the pending answers
	// answers holds an Answerer's answers not yet written, in the order of
	// their queries. They are queued before the chunk that asked goes to
	// the emulator or a client, and every write to the program writes
	// them first (writeLocked), so an answer always precedes the reply to
	// anything the program wrote after its query. Claude Code's probe is
	// OSC 7501;? then DA1, and a DA1 reply that arrives first means "no
	// reply to OSC 7501": the emulator's DA1 reply won that race in 2 of
	// 8 realcli runs (TestAnswerPrecedesLaterReplies fails without this).
	ansMu   sync.Mutex
	answers []byte
	emuSeq  atomic.Uint64 // output consumed by the emulator
	emu     *emuQueue
	// termMu is held by whoever applies the emulator's queue: the
	// emulator goroutine, or the reader when it applies a small chunk
	// itself (publish). It guards term and emuDone.
	termMu  sync.Mutex
	term    terminal
	emuDone uint64 // output the emulator has consumed, as emuSeq

	// Owned by the reader goroutine: the client filter, and whether it
	// ran for the previous chunk (a filter idle while nobody was attached
	// starts afresh).
	clientFilter *termsignal.Scanner
	filtering    bool
	filterBuf    []byte

	readerDone chan struct{}
	done       chan struct{} // process exited and output drained
	closed     chan struct{}
	closeOnce  sync.Once
	wg         sync.WaitGroup
}

// Start launches cfg.Argv in a new PTY and starts the pane's goroutines;
// Close stops them.
func Start(cfg Config) (*Pane, error) {
	if len(cfg.Argv) == 0 || cfg.Argv[0] == "" {
		return nil, errors.New("empty command")
	}
	if cfg.Cols <= 0 || cfg.Rows <= 0 {
		cfg.Cols, cfg.Rows = proto.DefaultCols, proto.DefaultRows
	}
	// The daemon refuses sizes out of range before it gets here; clamping
	// again means no caller can give the emulator a screen it cannot hold.
	cfg.Cols, cfg.Rows = proto.ClampSize(cfg.Cols, cfg.Rows)
	if cfg.Scrollback <= 0 {
		cfg.Scrollback = defaultScrollback
	}
	if cfg.RingSize <= 0 {
		cfg.RingSize = defaultRing
	}
	if !ValidWindowSize(cfg.WindowSize) {
		cfg.WindowSize = WindowLatest
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	path, err := exec.LookPath(cfg.Argv[0])
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", cfg.Argv[0], err)
	}
	cmd := exec.Command(path, cfg.Argv[1:]...)
	cmd.Args[0] = cfg.Argv[0]
	cmd.Dir = cfg.Dir
	cmd.Env = cfg.Env
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cfg.Cols), Rows: uint16(cfg.Rows)})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Argv[0], err)
	}
	var rc syscall.RawConn
	if f, polled, err := pollable(ptmx); err != nil {
		logger.Debug("pty master stays blocking", "err", err)
	} else if ptmx = f; polled {
		rc, _ = f.SyscallConn()
	}
	p := &Pane{
		cfg:        cfg,
		logger:     logger,
		proc:       cmd.Process,
		ptmx:       ptmx,
		rc:         rc,
		pid:        cmd.Process.Pid,
		ring:       newRing(cfg.RingSize),
		clients:    map[*Client]struct{}{},
		cols:       cfg.Cols,
		rows:       cfg.Rows,
		emu:        newEmuQueue(),
		term:       emulator.New(cfg.Cols, cfg.Rows, emulator.Limits{Lines: cfg.Scrollback, Bytes: cfg.ScrollbackBytes}),
		readerDone: make(chan struct{}),
		done:       make(chan struct{}),
		closed:     make(chan struct{}),
	}
	p.wg.Add(4)
	go p.readLoop()
	go p.waitLoop()
	go p.emulatorLoop()
	go p.replyLoop()
	return p, nil
}

// PID is the pane's root process id (also its process group id).
func (p *Pane) PID() int { return p.pid }

// Done is closed when the process has exited and its output is drained.
func (p *Pane) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited, and its exit code.
func (p *Pane) Exited() (bool, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited, p.exitCode
}

// Title is the last title the program set.
func (p *Pane) Title() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.title
}

// Size is the pane's current size.
func (p *Pane) Size() (cols, rows int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cols, p.rows
}

// ForegroundPGID is the process group in the terminal's foreground.
// It goes through SyscallConn, which holds the descriptor open for the
// call: File.Fd races with a concurrent Close (the estimator polls while a
// kill closes the pane).
func (p *Pane) ForegroundPGID() (int, error) {
	raw, err := p.ptmx.SyscallConn()
	if err != nil {
		return 0, err
	}
	var pgid int
	var ierr error
	if err := raw.Control(func(fd uintptr) { pgid, ierr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) }); err != nil {
		return 0, err
	}
	return pgid, ierr
}

func (p *Pane) readLoop() {
	defer p.wg.Done()
	defer close(p.readerDone)
	buf := make([]byte, 64<<10)
	for {
		n, err := p.read(buf)
		if err == nil && n >= floodRead {
			n, err = p.gather(buf, n)
		}
		if n > 0 {
			p.publish(buf[:n])
		}
		if err != nil {
			// EIO is how Linux reports that the slave side is gone.
			return
		}
	}
}

// floodRead is a read of the PTY that suggests a flood: the tty layer
// hands the master at most 4095 bytes per read (2-4 KiB in 46,000 of the
// daemon's 48,000 reads of corebench's 200 MB socket phase), where an echo
// or a repaint of a line is a few hundred bytes.
const floodRead = 2 << 10

// gather reads on without waiting after a read of floodRead or more, until
// the PTY is empty or buf is full, so that a flood is published in chunks
// of up to 64 KiB instead of 4: one write to each client, one scan and one
// queueing per 64 KiB instead of sixteen, and each client woken once. A
// keystroke's echo is smaller than floodRead and goes out at once, with no
// extra read.
func (p *Pane) gather(buf []byte, n int) (int, error) {
	if p.rc == nil {
		return n, nil
	}
	for n < len(buf) {
		m, err := rawio.TryRead(p.rc, buf[n:])
		n += m
		if m == 0 || err != nil {
			return n, err
		}
	}
	return n, nil
}

// publish hands one chunk to the ring, the clients and the emulator queue.
// It never blocks on any of them. The clients come before the emulator's
// wake-up: an echo goes out in the reader's own write, with no goroutine
// woken ahead of it (the emulator's data is queued first, only its wake
// waits).
func (p *Pane) publish(chunk []byte) {
	filtered := chunk
	var title string
	var titleChanged bool
	if p.cfg.Scanner != nil {
		filtered, title, titleChanged = p.cfg.Scanner.Scan(chunk)
		if a, ok := p.cfg.Scanner.(Answerer); ok {
			if b := a.Answer(); len(b) > 0 {
				p.answer(b)
			}
		}
	}
	out := chunk
	if p.cfg.FilterClients && p.attached.Load() > 0 {
		if !p.filtering {
			p.clientFilter = termsignal.NewClientFilter()
		}
		out, _ = p.clientFilter.Feed(chunk, p.filterBuf[:0])
		p.filterBuf = out
		p.filtering = true
	} else {
		p.filtering = false
	}
	var emuData []byte
	if !p.emu.isStale() {
		emuData = append([]byte(nil), filtered...)
	}
	p.mu.Lock()
	start := p.seq
	p.seq += uint64(len(chunk))
	p.ring.Write(chunk)
	if titleChanged {
		p.title = title
	}
	// The emulator's queue first: a client that is painted from snapshots
	// asks for one in pushOutput, and that snapshot must include this chunk.
	wake := p.emu.pushData(emuData, p.seq, titleChanged, title)
	if len(p.clients) > 0 {
		// out is the reader's buffer (or the filter's): a client that
		// queues it takes one copy shared by all (sharedCopy), and one that
		// writes it at once takes none.
		sc := sharedCopy{src: out}
		for c := range p.clients {
			c.pushOutput(start, p.seq, &sc)
		}
	}
	p.mu.Unlock()
	if !wake {
		return
	}
	// A small chunk (an echo, a line) is applied here, after the clients
	// have it, when the emulator goroutine is idle: waking it made the
	// runtime wake a second thread on every keystroke, on a core the
	// program and the client were about to need for the next one. A
	// flood's chunks are handed over, so that parsing overlaps reading.
	// The emulator's replies to queries go through a pipe that replyLoop
	// reads; replyLoop only queues them (answer), so applying here never
	// waits on the program.
	if len(emuData) <= inlineEmu && p.termMu.TryLock() {
		p.applyQueueLocked(true)
		p.termMu.Unlock()
		return
	}
	p.emu.signal()
}

// inlineEmu is the largest chunk the reader applies to the emulator itself.
const inlineEmu = 4 << 10

// sharedCopy is one chunk of output for every client, copied out of the
// reader's buffer the first time a client keeps it.
type sharedCopy struct {
	src, dup []byte
	copied   bool
}

func (s *sharedCopy) get() []byte {
	if !s.copied {
		s.dup, s.copied = append([]byte(nil), s.src...), true
	}
	return s.dup
}

func (p *Pane) waitLoop() {
	defer p.wg.Done()
	// The exit is first seen without reaping the program: a pane frozen
	// for a handoff leaves it to the next daemon image, whose adopted
	// pane reaps it and so learns its exit code.
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	p.mu.Lock()
	if p.frozen {
		p.mu.Unlock()
		return
	}
	p.reaping = true
	p.mu.Unlock()
	code := -1
	if st, err := p.proc.Wait(); err == nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = st.ExitCode()
		}
	}
	// Output written just before exit is still in the PTY; let the reader
	// drain it, but don't wait forever on a grandchild holding the slave.
	select {
	case <-p.readerDone:
	case <-time.After(2 * time.Second):
	}
	p.mu.Lock()
	p.exited = true
	p.exitCode = code
	for c := range p.clients {
		c.pushExit(code)
	}
	p.mu.Unlock()
	close(p.done)
	if p.cfg.OnExit != nil {
		p.cfg.OnExit(code)
	}
}

func (p *Pane) replyLoop() {
	defer p.wg.Done()
	buf := make([]byte, 4096)
	r := p.term.Replies()
	for {
		n, err := r.Read(buf)
		if n > 0 && p.attached.Load() == 0 {
			// With a client attached its own terminal answers the same
			// queries; answering too would send the program two replies.
			// Queued as an Answerer's answers are, never written here: a
			// program that asks and reads no input would block this loop,
			// the emulator writing its next reply, and so the reader.
			p.answer(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// Write sends input to the program.
func (p *Pane) Write(b []byte) error {
	select {
	case <-p.done:
		return ErrExited
	default:
	}
	p.lastInput.Store(time.Now().UnixNano())
	p.inputMu.Lock()
	defer p.inputMu.Unlock()
	if err := p.writeLocked(b); err != nil {
		return fmt.Errorf("write to pane: %w", err)
	}
	return nil
}

// writeLocked writes the pending answers and then b to the program; the
// caller holds inputMu.
func (p *Pane) writeLocked(b []byte) error {
	p.ansMu.Lock()
	ans := p.answers
	p.answers = nil
	p.ansMu.Unlock()
	if len(ans) > 0 {
		if _, err := p.write(ans); err != nil {
			return err
		}
	}
	if len(b) == 0 {
		return nil
	}
	_, err := p.write(b)
	return err
}

func (p *Pane) read(b []byte) (int, error) {
	if p.rc != nil {
		return rawio.Read(p.rc, b)
	}
	return p.ptmx.Read(b)
}

func (p *Pane) write(b []byte) (int, error) {
	if p.rc != nil {
		return rawio.Write(p.rc, b)
	}
	return p.ptmx.Write(b)
}

// maxPendingAnswers bounds the answers queued for a program that does not
// read its input; later ones are dropped.
const maxPendingAnswers = 4 << 10

// answer queues an answer to the program's query (an Answerer's, or the
// emulator's reply while no client is attached) and has it written off
// the reader goroutine (the program may not be reading its input, so the
// write may block): by one goroutine at a time, or by whichever write to
// the program comes first.
func (p *Pane) answer(b []byte) {
	p.ansMu.Lock()
	if len(p.answers)+len(b) <= maxPendingAnswers {
		p.answers = append(p.answers, b...)
	}
	p.ansMu.Unlock()
	if !p.answering.CompareAndSwap(false, true) {
		return
	}
	p.wg.Add(1) // the reader holds the group open, so Close waits for this
	go func() {
		defer p.wg.Done()
		for {
			p.inputMu.Lock()
			p.writeLocked(nil)
			p.inputMu.Unlock()
			p.answering.Store(false)
			// An answer queued after the write above, while answering
			// was still set, started no goroutine: write it too.
			p.ansMu.Lock()
			more := len(p.answers) > 0
			p.ansMu.Unlock()
			if !more || !p.answering.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// LastInput is when input (a client's keys, `muster send`) was last
// written to the program; zero before any.
func (p *Pane) LastInput() time.Time {
	if n := p.lastInput.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Resize sets the PTY and emulator size; the kernel signals the program.
// A size out of range (proto.ValidSize) is ignored.
func (p *Pane) Resize(cols, rows int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resizeLocked(cols, rows, false)
}

// resizeLocked is the one way a pane changes size, so it is where the pane
// ignores a size out of range, whichever path it came by.
func (p *Pane) resizeLocked(cols, rows int, force bool) {
	if !proto.ValidSize(cols, rows) {
		return
	}
	changed := cols != p.cols || rows != p.rows
	if changed {
		p.cols, p.rows = cols, rows
		p.setWinsize(cols, rows)
		p.emu.pushResize(cols, rows)
		// Every client is repainted at the new size: what it shows was
		// drawn for the old one (margins, wrapped lines), and a client of
		// another size is painted from snapshots from now on.
		for c := range p.clients {
			c.mu.Lock()
			if !c.closed {
				c.requestSnapshotLocked()
			}
			c.mu.Unlock()
		}
	}
	if force && !changed && !p.exited {
		// Same size: nothing tells the program to redraw, so do it.
		if pgid, err := p.ForegroundPGID(); err == nil && pgid > 0 {
			syscall.Kill(-pgid, syscall.SIGWINCH)
		}
	}
}

// setWinsize is pty.Setsize through SyscallConn: pty.Setsize calls
// File.Fd, which races with a concurrent Close and switches the PTY to
// blocking mode behind the runtime poller's back.
func (p *Pane) setWinsize(cols, rows int) {
	raw, err := p.ptmx.SyscallConn()
	if err != nil {
		return
	}
	raw.Control(func(fd uintptr) {
		unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	})
}

// Capture returns the emulator's screen text once it has caught up.
func (p *Pane) Capture(ctx context.Context, scrollback int, withANSI bool) (string, error) {
	res := make(chan string, 1)
	p.emu.pushFunc(func(t terminal) { res <- t.Text(scrollback, withANSI) })
	select {
	case s := <-res:
		return s, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-p.closed:
		return "", errors.New("pane closed")
	}
}

// Signal sends sig to the pane's process group.
func (p *Pane) Signal(sig syscall.Signal) error {
	return syscall.Kill(-p.pid, sig)
}

// Close ends the program (SIGHUP, then SIGKILL after grace) and stops every
// goroutine of the pane. It is idempotent.
func (p *Pane) Close(grace time.Duration) {
	p.closeOnce.Do(func() {
		select {
		case <-p.done:
		default:
			p.Signal(syscall.SIGHUP)
			p.Signal(syscall.SIGCONT)
			p.signalSession(syscall.SIGHUP, syscall.SIGCONT)
			select {
			case <-p.done:
			case <-time.After(grace):
				p.Signal(syscall.SIGKILL)
				<-p.done
			}
		}
		// What outlived the hangup (a job that ignored it) would hold the
		// terminal open and the reader with it.
		p.signalSession(syscall.SIGKILL)
		p.mu.Lock()
		for c := range p.clients {
			c.close()
		}
		p.clients = map[*Client]struct{}{}
		p.mu.Unlock()
		close(p.closed)
		p.emu.close()
		p.ptmx.Close()
		p.wg.Wait()
	})
}

// rebuild replaces lost emulator input with the tail of the ring. Called on
// the emulator goroutine when the queue overflowed.
func (p *Pane) rebuild() uint64 {
	p.mu.Lock()
	tail := p.ring.Tail(rebuildBytes)
	seq := p.seq
	p.emu.clearStale()
	p.mu.Unlock()
	// Start at a line boundary so we don't begin inside an escape sequence.
	if i := indexByte(tail, '\n'); i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	}
	if p.cfg.Scanner != nil {
		tail, _, _ = stripForRebuild(tail)
	}
	p.term.Write([]byte("\x1bc"))
	// In chunks, so that closing the pane need not wait for the rest: a
	// tail of hostile counts costs up to a screen of work every few bytes
	// (kill took 1.5 s behind a loop of REP, bench/hostile.sh).
	for len(tail) > 0 {
		select {
		case <-p.closed:
			return seq
		default:
		}
		n := min(len(tail), rebuildChunk)
		p.term.Write(tail[:n])
		tail = tail[n:]
	}
	return seq
}

// rebuildChunk is how much of a rebuild is written between checks that
// the pane is still open.
const rebuildChunk = 4 << 10

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// stripForRebuild removes the OSC sequences the scanner interprets from
// replayed bytes, with a fresh scanner so the live one's state is untouched.
func stripForRebuild(b []byte) ([]byte, string, bool) {
	out, _ := termsignal.New().Feed(b, make([]byte, 0, len(b)))
	return out, "", false
}

func (p *Pane) emulatorLoop() {
	defer p.wg.Done()
	for {
		if p.emu.isStale() {
			p.emu.waitQuiet(50 * time.Millisecond)
			p.termMu.Lock()
			p.emuDone = p.rebuild()
			p.emuSeq.Store(p.emuDone)
			p.termMu.Unlock()
		}
		ok := p.emu.wait()
		p.termMu.Lock()
		if !ok {
			p.term.Close()
			p.termMu.Unlock()
			return
		}
		p.applyQueueLocked(false)
		p.termMu.Unlock()
	}
}

// applyQueueLocked applies everything queued for the emulator, in order;
// the caller holds termMu. The reader (inline) leaves a stale queue to the
// emulator goroutine, which rebuilds first.
func (p *Pane) applyQueueLocked(inline bool) {
	for _, it := range p.emu.takeNow(inline) {
		switch it.kind {
		case itemData:
			if it.end <= p.emuDone {
				continue // already replayed from the ring
			}
			if it.titleChanged {
				p.term.SetTitle(it.title)
			}
			wasAlt := p.term.AltScreen()
			p.term.Write(it.data)
			p.emuDone = it.end
			p.emuSeq.Store(p.emuDone)
			if wasAlt && !p.term.AltScreen() {
				p.repaintClients()
			}
		case itemResize:
			p.term.Resize(it.cols, it.rows)
		case itemFunc:
			it.fn(p.term)
		}
	}
}

// repaintClients sends every client a fresh snapshot. Clients keep the
// user's terminal on one screen (its alternate screen) and turn the
// program's screen switches into clears, so when the program leaves its
// alternate screen, the main screen it returns to has to be repainted.
func (p *Pane) repaintClients() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.clients {
		c.mu.Lock()
		if !c.closed && !c.waitingSnap {
			c.requestSnapshotLocked()
		}
		c.mu.Unlock()
	}
}

func (p *Pane) emuSeqNow() uint64 { return p.emuSeq.Load() }
