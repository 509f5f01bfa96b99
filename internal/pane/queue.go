package pane

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/musterhq/muster/internal/emulator"
)

type itemKind int

const (
	itemData itemKind = iota
	itemResize
	itemFunc
)

type emuItem struct {
	kind         itemKind
	data         []byte
	end          uint64 // output sequence number after data
	titleChanged bool
	title        string
	cols, rows   int
	fn           func(t terminal)
	// quiet: a title set while the emulator is stale, which need not end
	// its wait for the output to stop.
	quiet bool
}

// emuQueue is the bounded queue between the reader and the emulator
// goroutine. Data beyond the bound is dropped and the emulator rebuilt;
// control items (resize, snapshot, capture) are never dropped.
type emuQueue struct {
	mu    sync.Mutex
	items []emuItem
	bytes int
	// stale is set when data was dropped; data is discarded until the
	// emulator goroutine rebuilds from the ring and clears it.
	stale  bool
	closed bool
	wake   chan struct{}
	// pushes counts pushData calls, for waitQuiet.
	pushes atomic.Uint64
}

func newEmuQueue() *emuQueue { return &emuQueue{wake: make(chan struct{}, 1)} }

func (q *emuQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pushData queues output for the emulator and reports whether to wake it
// (the caller signals once it has served the clients). A stale emulator is
// not woken: it waits for the output to stop, which it sees by polling
// pushes, so a flood wakes no goroutine per chunk.
func (q *emuQueue) pushData(data []byte, end uint64, titleChanged bool, title string) (wake bool) {
	q.pushes.Add(1)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stale || q.bytes+len(data) > emuQueueBytes {
		q.stale = true
		// Queued data is obsolete too: the rebuild replays the ring.
		kept := q.items[:0]
		for _, it := range q.items {
			if it.kind != itemData {
				kept = append(kept, it)
			} else if it.titleChanged {
				kept = append(kept, emuItem{kind: itemFunc, fn: setTitle(it.title)})
			}
		}
		q.items, q.bytes = kept, 0
		if titleChanged {
			q.items = append(q.items, emuItem{kind: itemFunc, fn: setTitle(title), quiet: true})
		}
		return false
	}
	q.items = append(q.items, emuItem{kind: itemData, data: data, end: end, titleChanged: titleChanged, title: title})
	q.bytes += len(data)
	return true
}

func setTitle(title string) func(t terminal) { return func(t terminal) { t.SetTitle(title) } }

func (q *emuQueue) push(it emuItem) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	q.signal()
}

func (q *emuQueue) pushResize(cols, rows int) {
	q.push(emuItem{kind: itemResize, cols: cols, rows: rows})
}
func (q *emuQueue) pushFunc(fn func(t terminal)) { q.push(emuItem{kind: itemFunc, fn: fn}) }

// wait blocks until something is queued and reports whether the queue is
// still open. It takes nothing: whoever holds the pane's termMu takes the
// items (takeNow), so that the emulator goroutine and the reader apply
// them in order.
func (q *emuQueue) wait() bool {
	for {
		q.mu.Lock()
		closed, n := q.closed, len(q.items)
		q.mu.Unlock()
		if closed {
			return false
		}
		if n > 0 {
			return true
		}
		<-q.wake
	}
}

// takeNow returns everything queued without waiting; nothing once the
// queue is closed, and, for the reader (inline), nothing while the
// emulator is stale, since the rebuild comes first.
func (q *emuQueue) takeNow(inline bool) []emuItem {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || (inline && q.stale) {
		return nil
	}
	items := q.items
	q.items, q.bytes = nil, 0
	return items
}

// waitQuiet blocks while output keeps arriving for a stale emulator, so a
// flood is replayed once when it ends instead of again and again. It
// checks for new output once per quiet period instead of being woken by
// every chunk, and returns early when a control item (snapshot, capture,
// resize) is queued.
func (q *emuQueue) waitQuiet(quiet time.Duration) {
	t := time.NewTimer(quiet)
	defer t.Stop()
	seen := q.pushes.Load()
	for {
		select {
		case <-t.C:
			now := q.pushes.Load()
			if now == seen {
				return
			}
			seen = now
			t.Reset(quiet)
		case <-q.wake:
			if q.controlQueued() {
				q.signal()
				return
			}
		}
	}
}

// controlQueued reports whether a control item waits (or the queue is
// closed): a stale emulator queues only those, and titles, which can wait.
func (q *emuQueue) controlQueued() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return true
	}
	for _, it := range q.items {
		if !it.quiet {
			return true
		}
	}
	return false
}

// clearStale is called with the pane lock held, at the rebuild point.
func (q *emuQueue) clearStale() {
	q.mu.Lock()
	q.stale = false
	q.mu.Unlock()
}

func (q *emuQueue) isStale() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stale
}

func (q *emuQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

type terminal = emulator.Terminal
