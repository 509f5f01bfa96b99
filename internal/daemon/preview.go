package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/musterhq/muster/internal/pane"
	"github.com/musterhq/muster/internal/proto"
)

// outputBell tells a session's preview streams that its pane printed
// something. It rings on the pane's reader goroutine, so ringing must cost
// nothing when nobody listens and never block when someone does.
type outputBell struct {
	n    atomic.Int32
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

func (b *outputBell) ring() {
	if b.n.Load() == 0 {
		return
	}
	b.mu.Lock()
	for c := range b.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	b.mu.Unlock()
}

func (b *outputBell) subscribe() (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[chan struct{}]struct{}{}
	}
	b.subs[c] = struct{}{}
	b.n.Add(1)
	b.mu.Unlock()
	return c, func() {
		b.mu.Lock()
		if _, ok := b.subs[c]; ok {
			delete(b.subs, c)
			b.n.Add(-1)
		}
		b.mu.Unlock()
	}
}

// bellLocked is s's bell, made on first use; d.mu is held.
func (s *session) bellLocked() *outputBell {
	if s.bell == nil {
		s.bell = &outputBell{}
	}
	return s.bell
}

// bellScanner rings the bell after the terminal-signal scanner saw a
// chunk: the emulator gets the chunk after the scanner, and a preview's
// capture queues behind it, so the screen sent includes it.
type bellScanner struct {
	pane.Scanner
	bell *outputBell
	// retitled, when set, runs when the chunk changed the pane's title,
	// which the session list shows.
	retitled func()
}

func (b bellScanner) Scan(p []byte) ([]byte, string, bool) {
	filtered, title, changed := b.Scanner.Scan(p)
	b.bell.ring()
	if changed && b.retitled != nil {
		b.retitled()
	}
	return filtered, title, changed
}

// Answer passes on the wrapped scanner's answers (pane.Answerer).
func (b bellScanner) Answer() []byte {
	if a, ok := b.Scanner.(pane.Answerer); ok {
		return a.Answer()
	}
	return nil
}

// untilHangUp returns a context that ends with ctx or when the client of a
// stream sends anything or hangs up: it sends nothing after its request.
// The caller's conn.CloseRead ends the read when the stream ends first.
func untilHangUp(ctx context.Context, br *bufio.Reader) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		br.Peek(1)
		cancel()
	}()
	return ctx, cancel
}

// preview serves op "preview": the pane's screen now, then again each time
// it changes, no more often than proto.MinPreviewInterval, until the pane
// exits or the client hangs up. The stream costs the pane's reader one
// atomic load per chunk while nobody watches; a watched pane costs one
// screen render per interval at most, on the emulator's goroutine.
func (d *Daemon) preview(ctx context.Context, conn *net.UnixConn, br *bufio.Reader, raw json.RawMessage) {
	rep := replier{w: deadlineWriter{conn}}
	var a proto.PreviewArgs
	if err := proto.DecodeArgs(raw, &a); err != nil {
		rep.fail(err)
		return
	}
	p0 := peerOf(ctx)()
	d.mu.Lock()
	s, err := d.lookupLocked(a.Name)
	if err == nil {
		err = d.mayDriveLocked(p0, s)
	}
	if err != nil {
		d.mu.Unlock()
		rep.fail(err)
		return
	}
	p, name, surfaceID := s.pane, s.rec.Name, s.surface.ID
	final, code := s.surface.FinalScreen, s.surface.ExitCode
	bell := s.bellLocked()
	d.mu.Unlock()

	if p == nil {
		// The process died with an earlier daemon: its last screen.
		rep.ok(proto.PreviewScreen{Name: name, SurfaceID: surfaceID, Lines: screenLines(final), Exited: true, ExitCode: code})
		return
	}
	rang, unsubscribe := bell.subscribe()
	defer unsubscribe()
	ctx, cancel := untilHangUp(ctx, br)
	defer cancel()
	defer conn.CloseRead()

	var last []string
	send := func() (done bool) {
		exited, exitCode := p.Exited()
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		text, err := p.Capture(cctx, 0, true)
		ccancel()
		if err != nil && !exited {
			if ctx.Err() == nil {
				rep.fail(proto.Errorf(proto.CodeInternal, "preview %s: %v", name, err))
			}
			return true
		}
		lines := last
		if err == nil {
			lines = screenLines(text)
		}
		if !exited && last != nil && slices.Equal(lines, last) {
			return false
		}
		last = lines
		cols, rows := p.Size()
		sc := proto.PreviewScreen{Name: name, SurfaceID: surfaceID, Cols: cols, Rows: rows, Lines: lines}
		if exited {
			sc.Exited, sc.ExitCode = true, &exitCode
		}
		return rep.ok(sc) != nil || exited
	}
	if send() {
		return
	}
	timer := time.NewTimer(0)
	<-timer.C
	for {
		select {
		case <-rang:
		case <-p.Done():
		case <-ctx.Done():
			return
		}
		// Let output gather for one interval, so that a pane streaming
		// output costs one render per interval, not one per chunk.
		timer.Reset(proto.MinPreviewInterval)
		select {
		case <-timer.C:
		case <-p.Done():
			timer.Stop()
		case <-ctx.Done():
			timer.Stop()
			return
		}
		select {
		case <-rang:
		default:
		}
		if send() {
			return
		}
	}
}

// screenLines splits captured screen text into rows, without the blanks
// that pad each row to the screen's width where they show nothing: after
// the last reset, or on a row with no styling at all.
func screenLines(text string) []string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return []string{}
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		head := strings.TrimRight(l, " ")
		if !strings.Contains(head, "\x1b") || strings.HasSuffix(head, "\x1b[m") || strings.HasSuffix(head, "\x1b[0m") {
			lines[i] = head
		}
	}
	return lines
}
