package pane

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"sync"

	"github.com/musterhq/muster/internal/proto"
)

// Frame is one message for an attached client.
type Frame struct {
	Type byte // proto.FrameOutput, FrameSnapshot, FrameExit, FrameRaw, or one passed to Notify
	Data []byte
	// Sink is, for FrameRaw, the SetDirect whose write left it: the
	// writer sends the bytes where that write went, or drops them.
	Sink uint64
}

// FrameRaw marks bytes that continue a write a direct write left half
// done: the writer sends them as they are, with no header, to the same
// place.
const FrameRaw byte = 0

// DirectWriter writes without ever blocking and returns what it could not
// write (nil when it wrote everything). It may write p transformed; the
// rest is then of the transformed bytes, and is sent as it is.
type DirectWriter func(p []byte) (rest []byte)

type chunk struct {
	start, end uint64 // raw output offsets: data may be filtered shorter
	data       []byte
}

// Client is one attached viewer. Output for it is queued without blocking the
// pane; when the queue overflows the client is resynchronised with a fresh
// snapshot instead of slowing the pane down.
type Client struct {
	p        *Pane
	readOnly bool

	mu          sync.Mutex
	cols, rows  int
	frames      []Frame
	bytes       int
	waitingSnap bool
	gen         uint64
	pending     []chunk
	pendBytes   int
	exitCode    *int
	closed      bool
	resyncs     int
	wake        chan struct{}
	// direct, when set, lets the pane's reader write small output straight
	// to an idle client instead of waking its writer goroutine: one
	// goroutine hand-off less on every keystroke echo.
	direct   DirectWriter
	framed   bool   // direct writes take a frame header
	sink     uint64 // counts SetDirect calls
	inflight bool   // the writer holds frames taken by Next, not yet Sent
	dbuf     []byte
	// dirty: the pane wrote output that this client, being of another
	// size than the pane, has not been repainted with yet.
	dirty bool
	// seen orders writable clients for the latest policy: the client
	// that attached or typed last has the highest.
	seen uint64
}

// mirrorsLocked reports whether raw output draws correctly on this client:
// its terminal is the pane's size (or its size is unknown). A client of
// any other size is painted from snapshots cut or padded to its size,
// since the program's output assumes the pane's margins and line width.
// c.mu and p.mu are held.
func (c *Client) mirrorsLocked() bool {
	return c.cols == 0 || (c.cols == c.p.cols && c.rows == c.p.rows)
}

// maxDirect bounds what the reader writes directly: a whole read (the
// reader reads 64 KiB at most). A direct write costs one non-blocking
// write where a hand-off to the writer costs a goroutine wake-up as well
// (BenchmarkOutputToClient: 28 CPU-ms per MiB with only echoes of up to 512
// bytes direct, 18 with every read); output is still batched by the writer
// whenever it is behind, because a client with frames queued or in flight
// gets no direct write.
var maxDirect = 64 << 10

// rawPrefix is the remainder of a half-written frame at the head of the
// queue: it is already partly on the wire, so it can never be dropped.
func (c *Client) rawPrefix() []Frame {
	var keep []Frame
	for _, f := range c.frames {
		if f.Type != FrameRaw {
			break
		}
		keep = append(keep, f)
	}
	return keep
}

// SetDirect enables direct writes through w, of frames (framed) or of the
// output bytes alone, and returns the sink that FrameRaw frames left by
// w's writes carry. When it returns, no write of an earlier w is under
// way or will be made. The client's writer must call Sent after it has
// written the frames Next returned.
func (c *Client) SetDirect(w DirectWriter, framed bool) (sink uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.direct, c.framed = w, framed
	c.sink++
	return c.sink
}

// Notify queues a frame of the caller's for the writer, after everything
// queued before it.
func (c *Client) Notify(typ byte, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.frames = append(c.frames, Frame{Type: typ, Data: data})
	c.bytes += len(data)
	c.signal()
}

// Repaint sends the client a snapshot of the screen at its size.
func (c *Client) Repaint() {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.requestSnapshotLocked()
	}
}

// Sent tells the client that the frames of the last Next are written. A
// client painted from snapshots gets its next one now if output came
// meanwhile: one repaint in flight at a time is what paces it.
func (c *Client) Sent() {
	c.mu.Lock()
	c.inflight = false
	again := c.needsRepaintLocked()
	c.mu.Unlock()
	if !again {
		return
	}
	c.p.mu.Lock()
	c.mu.Lock()
	if c.needsRepaintLocked() {
		c.requestSnapshotLocked()
	}
	c.mu.Unlock()
	c.p.mu.Unlock()
}

func (c *Client) needsRepaintLocked() bool {
	return c.dirty && !c.closed && !c.waitingSnap && !c.inflight && len(c.frames) == 0
}

// Attach registers a client of the given size. A writable client becomes
// the leader and sets the pane size; the first frame it receives is a
// snapshot of the screen. A size out of range (proto.ValidSize), such as
// 0×0, leaves the pane's size alone.
func (p *Pane) Attach(cols, rows int, readOnly bool) *Client {
	if !proto.ValidSize(cols, rows) {
		cols, rows = 0, 0
	}
	c := &Client{p: p, readOnly: readOnly, cols: cols, rows: rows, wake: make(chan struct{}, 1)}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clients[c] = struct{}{}
	p.attached.Add(1)
	if !readOnly && !p.exited && cols > 0 {
		p.seen++
		c.seen = p.seen
		p.leader = c
		p.applySizeLocked(true)
	}
	c.mu.Lock()
	c.requestSnapshotLocked()
	if p.exited {
		code := p.exitCode
		c.exitCode = &code
	}
	c.mu.Unlock()
	return c
}

// requestSnapshotLocked asks the emulator goroutine for a snapshot; c.mu and
// p.mu are held so that the request is ordered with the output stream.
func (c *Client) requestSnapshotLocked() {
	c.waitingSnap = true
	c.gen++
	c.frames, c.bytes = c.rawPrefix(), 0
	c.pending, c.pendBytes = nil, 0
	c.dirty = false
	gen := c.gen
	c.p.emu.pushFunc(func(t terminal) {
		// Runs on the emulator goroutine, after every byte that preceded
		// the request; the pane sequence number at that point is what the
		// emulator has consumed. The size is read here, not at the
		// request, so that a resize queued meanwhile is honoured.
		c.mu.Lock()
		cols, rows := c.cols, c.rows
		c.mu.Unlock()
		tc, tr := t.Size()
		mirror := cols == 0 || (cols == tc && rows == tr)
		c.deliverSnapshot(gen, t.Snapshot(cols, rows), mirror)
	})
}

// pushOutput is called with p.mu held. out's bytes are only borrowed: a
// client that keeps them takes out.get().
func (c *Client) pushOutput(start, end uint64, out *sharedCopy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if !c.mirrorsLocked() {
		if c.waitingSnap || c.inflight || len(c.frames) > 0 {
			c.dirty = true
			return
		}
		c.requestSnapshotLocked()
		return
	}
	data := out.src
	if c.waitingSnap {
		data = out.get()
		c.pending = append(c.pending, chunk{start, end, data})
		c.pendBytes += len(data)
		if c.pendBytes > clientQueueBytes {
			c.resyncs++
			c.requestSnapshotLocked()
		}
		return
	}
	if c.direct != nil && !c.inflight && len(c.frames) == 0 && len(data) <= maxDirect {
		// Nothing is queued or being written, so writing here keeps the
		// order; the write never blocks, and what it could not send is
		// queued as the frame's remainder.
		p := data
		if c.framed {
			c.dbuf = append(c.dbuf[:0], proto.FrameOutput, 0, 0, 0, 0)
			binary.BigEndian.PutUint32(c.dbuf[1:5], uint32(len(data)))
			c.dbuf = append(c.dbuf, data...)
			p = c.dbuf
		}
		rest := c.direct(p)
		if len(rest) == 0 {
			return
		}
		rest = append([]byte(nil), rest...)
		c.frames = append(c.frames, Frame{Type: FrameRaw, Data: rest, Sink: c.sink})
		c.bytes += len(rest)
		c.signal()
		return
	}
	data = out.get()
	c.frames = append(c.frames, Frame{Type: proto.FrameOutput, Data: data})
	c.bytes += len(data)
	if c.bytes > clientQueueBytes {
		c.resyncs++
		c.requestSnapshotLocked()
	}
	c.signal()
}

// pushExit is called with p.mu held.
func (c *Client) pushExit(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.exitCode = &code
	if c.needsRepaintLocked() {
		c.requestSnapshotLocked() // the final screen, before the exit
	}
	c.signal()
}

// deliverSnapshot runs on the emulator goroutine. Chunks queued since the
// request started at or after the snapshot point only if the emulator had
// not yet seen them, which the sequence check below sorts out.
func (c *Client) deliverSnapshot(gen uint64, snap []byte, mirror bool) {
	emuSeq := c.p.emuSeqNow()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || gen != c.gen || !c.waitingSnap {
		return
	}
	c.waitingSnap = false
	c.frames = append(c.rawPrefix(), Frame{Type: proto.FrameSnapshot, Data: snap})
	c.bytes = len(snap)
	if !mirror {
		// Raw output does not fit this client; what came after the
		// snapshot point is painted by the next one.
		for _, ch := range c.pending {
			if ch.end > emuSeq {
				c.dirty = true
			}
		}
		c.pending, c.pendBytes = nil, 0
		c.signal()
		return
	}
	for _, ch := range c.pending {
		if ch.end <= emuSeq {
			continue
		}
		data := ch.data
		if ch.start < emuSeq {
			// The emulator consumes whole chunks, so this does not
			// happen; a chunk the client filter shortened could not be
			// cut at a raw offset anyway.
			if ch.end-ch.start != uint64(len(data)) {
				continue
			}
			data = data[emuSeq-ch.start:]
		}
		c.frames = append(c.frames, Frame{Type: proto.FrameOutput, Data: data})
		c.bytes += len(data)
	}
	c.pending, c.pendBytes = nil, 0
	c.signal()
}

func (c *Client) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Next blocks until frames are ready and returns them, merging consecutive
// output. ok is false once the client is closed or the pane exited and
// everything was delivered.
func (c *Client) Next(ctx context.Context) (frames []Frame, ok bool) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, false
		}
		if len(c.frames) > 0 {
			frames = c.frames
			c.frames, c.bytes = nil, 0
			c.inflight = true
			c.mu.Unlock()
			return frames, true
		}
		if c.exitCode != nil && !c.waitingSnap && !c.dirty {
			payload, _ := json.Marshal(map[string]int{"exit_code": *c.exitCode})
			c.closed = true
			c.mu.Unlock()
			return []Frame{{Type: proto.FrameExit, Data: payload}}, true
		}
		c.mu.Unlock()
		select {
		case <-c.wake:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// Input types into the pane; the client becomes the leader, whose size
// the pane takes under the latest policy.
func (c *Client) Input(b []byte) error {
	if c.readOnly {
		return nil
	}
	c.p.mu.Lock()
	if c.p.leader != c && !c.p.exited {
		c.p.leader = c
		c.p.seen++
		c.seen = c.p.seen
		c.p.applySizeLocked(false)
	}
	c.p.mu.Unlock()
	return c.p.Write(b)
}

// Resize records the client's size and applies the pane's window-size
// policy. The client is repainted at its new size either way. A size out
// of range (proto.ValidSize) is ignored.
func (c *Client) Resize(cols, rows int) {
	if !proto.ValidSize(cols, rows) {
		return
	}
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.mu.Lock()
	c.cols, c.rows = cols, rows
	c.mu.Unlock()
	if !c.readOnly && !c.p.exited {
		c.p.applySizeLocked(false)
	}
	c.mu.Lock()
	if !c.closed {
		c.requestSnapshotLocked()
	}
	c.mu.Unlock()
}

// applySizeLocked sizes the pane by its policy over the writable clients
// of known size; with none, the pane keeps its size. force makes the
// program redraw even when the size stays (a new client needs a screen).
func (p *Pane) applySizeLocked(force bool) {
	cols, rows := 0, 0
	writable := func(c *Client) (int, int, bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.cols, c.rows, !c.readOnly && !c.closed && c.cols > 0
	}
	if p.cfg.WindowSize == WindowLatest {
		if p.leader == nil {
			for c := range p.clients {
				if _, _, ok := writable(c); ok && (p.leader == nil || c.seen > p.leader.seen) {
					p.leader = c
				}
			}
		}
		if p.leader != nil {
			cols, rows, _ = writable(p.leader)
		}
	} else {
		for c := range p.clients {
			cc, cr, ok := writable(c)
			if !ok {
				continue
			}
			if cols == 0 {
				cols, rows = cc, cr
			} else if p.cfg.WindowSize == WindowSmallest {
				cols, rows = min(cols, cc), min(rows, cr)
			} else {
				cols, rows = max(cols, cc), max(rows, cr)
			}
		}
	}
	if cols > 0 && rows > 0 {
		p.resizeLocked(cols, rows, force)
	}
}

// Resyncs counts how often the client fell behind and was resynchronised.
func (c *Client) Resyncs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resyncs
}

// Detach removes the client.
func (c *Client) Detach() {
	c.p.mu.Lock()
	if _, ok := c.p.clients[c]; ok {
		delete(c.p.clients, c)
		c.p.attached.Add(-1)
	}
	if c.p.leader == c {
		c.p.leader = nil
	}
	if !c.readOnly && !c.p.exited {
		// The clients left decide the size: under latest, the one
		// active most recently leads.
		c.p.applySizeLocked(false)
	}
	c.p.mu.Unlock()
	c.close()
}

func (c *Client) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.signal()
}
