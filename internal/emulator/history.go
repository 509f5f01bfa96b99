package emulator

import (
	"bytes"
	"compress/flate"
	"io"
	"slices"
	"sync"
	"sync/atomic"
)

// history is a terminal's scrollback kept compactly: each line that leaves
// the top of the main screen is rendered once to its text with SGR styles
// (about one byte per plain column, where x/vt keeps 112 bytes per cell).
// The newest lines are kept as strings; every blockLines of them (or
// blockBytes) are sealed into a block, flate-compressed at its fastest
// level, and read back only when the history is read (capture, copy
// mode). It is bounded by lines, by bytes per terminal, and by bytes
// across every terminal of the process (SetTotalScrollbackBytes), all
// counted on the text, not on what the compression made of it.
type history struct {
	// mu guards the lines: the terminal's goroutine adds them, and a
	// terminal over the process bound may drop the oldest of another.
	mu     sync.Mutex
	blocks []block // sealed lines, the oldest first
	skip   int     // lines of blocks[0] already dropped
	open   []string
	// openBytes is the text in open, for sealing it.
	openBytes int
	n         int // lines kept
	bytes     atomic.Int64
	maxLines  int
	maxBytes  int
}

// block is blockLines lines, compressed together.
type block struct {
	z    []byte   // flate of the lines' text, one after the other
	lens []uint32 // each line's length
}

const (
	// blockLines and blockBytes bound the open block: large enough for
	// flate to find the repetition in lines of output, small enough that
	// reading back the newest lines decompresses little.
	blockLines = 256
	blockBytes = 32 << 10
)

// lineOverhead is what a kept line is counted beyond its text.
const lineOverhead = 16

// DefaultScrollbackBytes bounds one terminal's history when no bound is
// given: 10,000 full 80-column lines of plain text count about 1 MiB.
const DefaultScrollbackBytes = 4 << 20

var (
	totalBytes atomic.Int64
	totalLimit atomic.Int64
	// all is every history not yet released, for the process bound.
	allMu sync.Mutex
	all   = map[*history]struct{}{}
	// The compressor's state is about 1 MiB: one per sealing goroutine at
	// a time, never one per terminal.
	writers = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, flate.BestSpeed)
		return w
	}}
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
	for h.n > 0 && (h.n >= h.maxLines || int(h.bytes.Load())+cost > h.maxBytes) {
		h.dropOldest()
	}
	h.open = append(h.open, line)
	h.openBytes += len(line)
	h.n++
	h.bytes.Add(int64(cost))
	totalBytes.Add(int64(cost))
	if len(h.open) >= blockLines || h.openBytes >= blockBytes {
		h.seal()
	}
}

// seal compresses the open lines into a block; needs h.mu.
func (h *history) seal() {
	var buf bytes.Buffer
	buf.Grow(h.openBytes / 2)
	w := writers.Get().(*flate.Writer)
	w.Reset(&buf)
	lens := make([]uint32, len(h.open))
	for i, l := range h.open {
		io.WriteString(w, l)
		lens[i] = uint32(len(l))
	}
	w.Close()
	writers.Put(w)
	h.blocks = append(h.blocks, block{z: bytes.Clone(buf.Bytes()), lens: lens})
	clear(h.open)
	h.open, h.openBytes = h.open[:0], 0
}

// text decompresses a block's lines.
func (b *block) text() []string {
	size := 0
	for _, l := range b.lens {
		size += int(l)
	}
	raw := make([]byte, size)
	r := flate.NewReader(bytes.NewReader(b.z))
	defer r.Close()
	if _, err := io.ReadFull(r, raw); err != nil {
		// Only this package writes blocks; a short one is a bug, and its
		// lines read as empty rather than as someone else's text.
		raw = make([]byte, size)
	}
	s := string(raw)
	lines := make([]string, len(b.lens))
	off := 0
	for i, l := range b.lens {
		lines[i] = s[off : off+int(l)]
		off += int(l)
	}
	return lines
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
		for goal := big.bytes.Load() * 9 / 10; big.n > 0 && big.bytes.Load() > goal; {
			big.dropOldest()
		}
		big.mu.Unlock()
	}
}

// dropOldest needs h.mu and h.n > 0.
func (h *history) dropOldest() {
	var size int
	if len(h.blocks) > 0 {
		b := &h.blocks[0]
		size = int(b.lens[h.skip])
		h.skip++
		if h.skip == len(b.lens) {
			h.blocks[0] = block{}
			h.blocks, h.skip = h.blocks[1:], 0
		}
	} else {
		size = len(h.open[0])
		h.open[0] = ""
		h.open = h.open[1:]
		h.openBytes -= size
	}
	cost := size + lineOverhead
	h.n--
	h.bytes.Add(-int64(cost))
	totalBytes.Add(-int64(cost))
}

// last returns the last n lines, oldest first.
func (h *history) last(n int) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	n = min(n, h.n)
	if n <= len(h.open) {
		return slices.Clone(h.open[len(h.open)-n:])
	}
	// The blocks that hold the rest, newest first.
	need, first := n-len(h.open), len(h.blocks)
	for need > 0 && first > 0 {
		first--
		have := len(h.blocks[first].lens)
		if first == 0 {
			have -= h.skip
		}
		need -= min(need, have)
	}
	out := make([]string, 0, n)
	for i := first; i < len(h.blocks); i++ {
		lines := h.blocks[i].text()
		if i == 0 {
			lines = lines[h.skip:]
		}
		out = append(out, lines...)
	}
	out = append(out, h.open...)
	return out[len(out)-n:]
}

// len needs h.mu (or the terminal's goroutine, the only writer).
func (h *history) len() int { return h.n }

// stored is the memory the lines take: compressed blocks, their line
// lengths, and the open lines' text.
func (h *history) stored() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	size := h.openBytes + lineOverhead*len(h.open)
	for _, b := range h.blocks {
		size += len(b.z) + 4*len(b.lens)
	}
	return size
}

// clear drops every line.
func (h *history) clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.n > 0 {
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
	h.blocks, h.skip, h.open, h.openBytes, h.n = nil, 0, nil, 0, 0
}
