package emulator

import (
	"slices"
	"sync"
	"sync/atomic"
)

// history is a terminal's scrollback kept compactly: each line that leaves
// the top of the main screen is rendered once to its text with SGR styles
// (about one byte per plain column, where x/vt keeps 112 bytes per cell)
// and kept in a ring bounded by lines, by bytes per terminal, and by bytes
// across every terminal of the process (SetTotalScrollbackBytes).
type history struct {
	// mu guards the lines: the terminal's goroutine adds them, and a
	// terminal over the process bound may drop the oldest of another.
	mu       sync.Mutex
	lines    []string // lines[head:] are kept, the oldest first
	head     int
	bytes    atomic.Int64
	maxLines int
	maxBytes int
}

// lineOverhead is what a kept line costs beyond its text: its string
// header in the ring.
const lineOverhead = 16

// DefaultScrollbackBytes bounds one terminal's history when no bound is
// given: 10,000 full 80-column lines of plain text take about 1 MiB.
const DefaultScrollbackBytes = 4 << 20

var (
	totalBytes atomic.Int64
	totalLimit atomic.Int64
	// all is every history not yet released, for the process bound.
	allMu sync.Mutex
	all   = map[*history]struct{}{}
)

// SetTotalScrollbackBytes bounds the history of all terminals together: a
// line that would go beyond it first drops the oldest line of the terminal
// holding the most. Zero or less means no bound beyond each terminal's.
func SetTotalScrollbackBytes(n int64) { totalLimit.Store(n) }

// TotalScrollbackBytes is the history held by all terminals now.
func TotalScrollbackBytes() int64 { return totalBytes.Load() }

func newHistory(maxLines, maxBytes int) *history {
	if maxBytes <= 0 {
		maxBytes = DefaultScrollbackBytes
	}
	h := &history{maxLines: max(1, maxLines), maxBytes: maxBytes}
	allMu.Lock()
	all[h] = struct{}{}
	allMu.Unlock()
	return h
}

func (h *history) push(line string) {
	cost := len(line) + lineOverhead
	if limit := totalLimit.Load(); limit > 0 && totalBytes.Load()+int64(cost) > limit {
		makeRoom(limit - int64(cost))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.len() > 0 && (h.len() >= h.maxLines || int(h.bytes.Load())+cost > h.maxBytes) {
		h.dropOldest()
	}
	if h.head > 0 && h.head >= len(h.lines)/2 {
		// Move the kept lines down once half the slice is dropped ones:
		// amortised O(1) a line, and the slice never exceeds twice the
		// lines kept.
		n := copy(h.lines, h.lines[h.head:])
		clear(h.lines[n:])
		h.lines, h.head = h.lines[:n], 0
	}
	h.lines = append(h.lines, line)
	h.bytes.Add(int64(cost))
	totalBytes.Add(int64(cost))
}

// makeRoom drops the oldest lines of the largest histories until all of
// them hold at most target bytes.
func makeRoom(target int64) {
	allMu.Lock()
	defer allMu.Unlock()
	for totalBytes.Load() > max(target, 0) {
		var big *history
		for h := range all {
			if big == nil || h.bytes.Load() > big.bytes.Load() {
				big = h
			}
		}
		if big == nil || big.bytes.Load() == 0 {
			return
		}
		big.mu.Lock()
		// A tenth of it at a time, so that the scan is not per line.
		for goal := big.bytes.Load() * 9 / 10; big.len() > 0 && big.bytes.Load() > goal; {
			big.dropOldest()
		}
		big.mu.Unlock()
	}
}

// dropOldest needs h.mu.
func (h *history) dropOldest() {
	cost := len(h.lines[h.head]) + lineOverhead
	h.lines[h.head] = ""
	h.head++
	h.bytes.Add(-int64(cost))
	totalBytes.Add(-int64(cost))
}

// last returns the last n lines, oldest first.
func (h *history) last(n int) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.lines[max(h.head, len(h.lines)-n):])
}

// len needs h.mu (or the terminal's goroutine, the only writer).
func (h *history) len() int { return len(h.lines) - h.head }

// clear drops every line.
func (h *history) clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.len() > 0 {
		h.dropOldest()
	}
}

// release gives the history's bytes back to the process total.
func (h *history) release() {
	allMu.Lock()
	delete(all, h)
	allMu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	totalBytes.Add(-h.bytes.Load())
	h.bytes.Store(0)
	h.lines, h.head = nil, 0
}
