package stats

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/musterhq/muster/internal/transcript"
)

// The stored analysis is binary, not JSON, and in two parts
// (history.Analysis). Every report reads every session's brief: tool
// counts, edited files, and the usage rolled up by quarter hour and model,
// with the keys of the responses (to find those another file repeats). A
// report that needs each response (5-hour blocks, a bound or a day that
// cuts a quarter hour, a session repeating another's responses) reads the
// full part, the usage log, for those sessions only. With the whole log
// read for every session, decoding it and copying it out of SQLite were
// most of a warm `muster stats`.
//
// All integers are unsigned varints unless said otherwise, strings a
// length then bytes. Brief:
//
//	magic byte 0xA5, format byte 4
//	recorded cost: float64 bits, 8 bytes little endian (0: none)
//	tools:   count, then (name, calls) each
//	tool errors
//	models:  count, then name each
//	rollup:  count, then each: quarter hour since the epoch plus one
//	         (0 = unknown time) as a signed varint delta from the previous
//	         row, model index, responses, last response's ms within the
//	         quarter, input, output, cache read, cache write, reasoning,
//	         then the recorded cost's share (8 bytes) when there is one
//	keys:    count, then 8 bytes little endian each (non-zero, distinct)
//	files:   count, then each in order of path: the length of the prefix
//	         it shares with the previous path, the rest of the path, edits,
//	         added, removed
//
// The files are most of a brief, and their paths mostly repeat the
// previous one's directory: written whole, they made the brief of a
// 40-turn session 2.4 kB, a database page each, and every warm report
// read (and copied twice out of SQLite) three times what it needed. A
// report reads them in place (fileIter), with no string per path.
//
// Full:
//
//	magic byte 0xA5, format byte 4
//	models:  count, then name each
//	usage:   count, then each: key hash (8 bytes little endian, 0 = no key),
//	         time in unix ms as a signed varint delta from the previous entry
//	         (0 = unknown), model index, input, output, cache read,
//	         cache write, reasoning
//
// The log is the transcript's usage log with repeats of a key dropped, or,
// for a format without one, the session's usage per model dated at its
// start (usageByModel).
const (
	detailMagic  = 0xA5
	detailFormat = 4
)

// quarter is the rollup's time unit. Every time zone in use is a whole
// number of quarter hours from UTC, so a quarter falls in one local day;
// Compute checks that it does, and reads the full log where not.
const quarter = 15 * 60 * 1000

// usageKey hashes a UsageEntry key; 0 means the entry has none. 64 bits make
// a false duplicate among millions of responses vanishingly unlikely.
func usageKey(key string) uint64 {
	if key == "" {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	if v := h.Sum64(); v != 0 {
		return v
	}
	return 1
}

func unixMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// encodeAnalysis writes d and its usage log (with the session's recorded
// cost shared out by tokens) as a brief and a full part.
func encodeAnalysis(d Detail, log []transcript.UsageEntry, cost float64) (brief, full []byte) {
	b := []byte{detailMagic, detailFormat}
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	num := func(n int64) { b = binary.AppendUvarint(b, uint64(max(n, 0))) }
	usage := func(u transcript.Usage) {
		num(u.Input)
		num(u.Output)
		num(u.CacheRead)
		num(u.CacheWrite)
		num(u.Reasoning)
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(cost))
	b = binary.AppendUvarint(b, uint64(len(d.Tools)))
	for _, name := range slices.Sorted(maps.Keys(d.Tools)) {
		str(name)
		num(int64(d.Tools[name]))
	}
	num(int64(d.ToolErrors))

	// The log as entries, repeats of a key dropped, costs shared.
	var models []string
	index := map[string]int32{}
	var es []entry
	keys := map[uint64]bool{}
	for _, e := range log {
		k := usageKey(e.Key)
		if k != 0 {
			if keys[k] {
				continue
			}
			keys[k] = true
		}
		mi, ok := index[e.Model]
		if !ok {
			mi = int32(len(models))
			index[e.Model] = mi
			models = append(models, e.Model)
		}
		es = append(es, entry{key: k, ms: unixMS(e.Time), model: mi, u: e.Usage})
	}
	if cost > 0 {
		shareCost(es, cost)
	}
	b = binary.AppendUvarint(b, uint64(len(models)))
	for _, m := range models {
		str(m)
	}
	type cell struct {
		q     int64
		model int32
	}
	type sum struct {
		n    int
		last int64
		u    transcript.Usage
		cost float64
	}
	cells := map[cell]*sum{}
	for _, e := range es {
		c := cell{quarterOf(e.ms), e.model}
		x := cells[c]
		if x == nil {
			x = &sum{}
			cells[c] = x
		}
		x.n++
		x.last = max(x.last, e.ms)
		x.u.Add(e.u)
		x.cost += e.cost
	}
	order := slices.SortedFunc(maps.Keys(cells), func(a, b cell) int {
		return cmp.Or(cmp.Compare(a.q, b.q), cmp.Compare(a.model, b.model))
	})
	b = binary.AppendUvarint(b, uint64(len(order)))
	var prevQ int64
	for _, c := range order {
		x := cells[c]
		b = binary.AppendVarint(b, c.q-prevQ)
		prevQ = c.q
		b = binary.AppendUvarint(b, uint64(c.model))
		num(int64(x.n))
		var within int64
		if c.q != 0 {
			within = x.last - quarterStart(c.q)
		}
		num(within)
		usage(x.u)
		if cost > 0 {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.cost))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, e := range es {
		if e.key != 0 {
			b = binary.LittleEndian.AppendUint64(b, e.key)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(d.Files)))
	prevPath := ""
	for _, p := range slices.Sorted(maps.Keys(d.Files)) {
		fc := d.Files[p]
		shared := 0
		for shared < min(len(p), len(prevPath)) && p[shared] == prevPath[shared] {
			shared++
		}
		num(int64(shared))
		str(p[shared:])
		num(int64(fc.Edits))
		num(int64(fc.Added))
		num(int64(fc.Removed))
		prevPath = p
	}
	brief = b

	b = []byte{detailMagic, detailFormat}
	b = binary.AppendUvarint(b, uint64(len(models)))
	for _, m := range models {
		str(m)
	}
	b = binary.AppendUvarint(b, uint64(len(es)))
	var prev int64
	for _, e := range es {
		b = binary.LittleEndian.AppendUint64(b, e.key)
		b = binary.AppendVarint(b, e.ms-prev)
		prev = e.ms
		b = binary.AppendUvarint(b, uint64(e.model))
		usage(e.u)
	}
	return brief, b
}

// quarterOf numbers the quarter hour of ms from 1; 0 is an unknown time.
func quarterOf(ms int64) int64 {
	if ms == 0 {
		return 0
	}
	return ms/quarter + 1
}

func quarterStart(q int64) int64 { return (q - 1) * quarter }

// entry is one decoded usage log entry, or one rollup row (the usage of a
// model's responses in a quarter hour). It holds no pointer (the model is
// an index), so the entries of thousands of sessions cost the garbage
// collector nothing to scan.
type entry struct {
	key   uint64
	ms    int64 // 0: unknown; a rollup row's: its quarter's start
	last  int64 // the last response's time (a log entry's is ms)
	model int32 // into detailView.models, then into a modelTable
	u     transcript.Usage
	// cost is a provider-recorded cost share; recorded says to use it
	// instead of the price table.
	cost     float64
	recorded bool
	// rolled marks a rollup row: it covers [ms, ms+quarter).
	rolled bool
}

// detailView is a decoded brief, in slices: cheaper to build and to
// aggregate than the maps of Detail. Its entries are the rollup rows until
// the full log replaces them (decodeFull).
type detailView struct {
	cost   float64
	tools  []toolCount
	errors int
	// files is the brief's files section after its count, nfiles the
	// count; fileIter reads them.
	files   []byte
	nfiles  int
	models  []string
	entries []entry
	// keys are the 8-byte keys of the session's responses.
	keys []byte
}

type toolCount struct {
	name string
	n    int
}

// reader decodes the stored format; any overrun or bad count sets bad.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.bad {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items of at least min bytes each, refusing one the
// rest of the input cannot hold (a corrupt count must not allocate
// gigabytes).
func (r *reader) count(minBytes int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/minBytes) {
		r.bad = true
		return 0
	}
	return int(n)
}

func (r *reader) int() int64 {
	v := r.uvarint()
	if v > 1<<62 {
		r.bad = true
		return 0
	}
	return int64(v)
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		return ""
	}
	// The strings share the stored bytes, which nothing writes to after
	// the query: a copy of every path and model name was a third of
	// decoding.
	s := unsafe.String(unsafe.SliceData(r.b), int(n))
	r.b = r.b[n:]
	return s
}

func (r *reader) u64() uint64 {
	if r.bad || len(r.b) < 8 {
		r.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *reader) header() {
	if len(r.b) < 2 || r.b[0] != detailMagic || r.b[1] != detailFormat {
		r.bad = true
		return
	}
	r.b = r.b[2:]
}

func (r *reader) models() []string {
	models := make([]string, r.count(1))
	for i := range models {
		models[i] = r.str()
	}
	return models
}

func (r *reader) model(n int) int32 {
	mi := r.uvarint()
	if mi >= uint64(n) {
		r.bad = true
		return 0
	}
	return int32(mi)
}

func (r *reader) usage() transcript.Usage {
	return transcript.Usage{Input: r.int(), Output: r.int(), CacheRead: r.int(), CacheWrite: r.int(), Reasoning: r.int()}
}

// decodeBrief reads a stored brief; ok is false when raw is missing or not
// in the current format (the session then counts from its summary). The
// strings of the result point into raw, which must not change.
func decodeBrief(raw []byte) (detailView, bool) {
	var d detailView
	r := &reader{b: raw}
	r.header()
	d.cost = math.Float64frombits(r.u64())
	if r.bad || d.cost < 0 || math.IsNaN(d.cost) || math.IsInf(d.cost, 0) {
		return detailView{}, false
	}
	d.tools = make([]toolCount, r.count(2))
	for i := range d.tools {
		d.tools[i] = toolCount{r.str(), int(r.int())}
	}
	d.errors = int(r.int())
	d.models = r.models()
	d.entries = make([]entry, r.count(9))
	var q int64
	for i := range d.entries {
		e := &d.entries[i]
		q += r.varint()
		if q < 0 {
			r.bad = true
		}
		e.model = r.model(len(d.models))
		r.int() // responses: blocks count them from the log
		within := r.int()
		e.u = r.usage()
		if q != 0 {
			e.ms = quarterStart(q)
			e.last = e.ms + within
			e.rolled = true
		}
		if d.cost > 0 {
			e.cost, e.recorded = math.Float64frombits(r.u64()), true
		}
		if r.bad {
			break
		}
	}
	n := r.count(8)
	if r.bad {
		return detailView{}, false
	}
	d.keys, r.b = r.b[:8*n], r.b[8*n:]
	// The files are checked here, so that fileIter, which reads them
	// later, cannot fail.
	d.nfiles = r.count(5)
	d.files = r.b
	prevLen := uint64(0)
	for range d.nfiles {
		shared := r.uvarint()
		rest := r.uvarint()
		if shared > prevLen || rest > uint64(len(r.b)) {
			r.bad = true
		}
		if r.bad {
			break
		}
		r.b = r.b[rest:]
		prevLen = shared + rest
		r.int()
		r.int()
		r.int()
	}
	if r.bad || len(r.b) != 0 {
		return detailView{}, false
	}
	return d, true
}

// fileIter walks the files of a brief decodeBrief accepted.
type fileIter struct {
	r reader
	n int
	// path is the current file's path, in a buffer the next one reuses.
	path []byte
	FileChange
}

// fileIter starts a walk of d's files; buf, when not nil, is a buffer to
// reuse for the paths (a previous walk's path).
func (d *detailView) fileIter(buf []byte) fileIter {
	return fileIter{r: reader{b: d.files}, n: d.nfiles, path: buf[:0]}
}

func (it *fileIter) next() bool {
	if it.n == 0 || it.r.bad {
		return false
	}
	it.n--
	shared := int(it.r.uvarint())
	it.path = append(it.path[:min(shared, len(it.path))], it.r.str()...)
	it.FileChange = FileChange{Edits: int(it.r.int()), Added: int(it.r.int()), Removed: int(it.r.int())}
	return !it.r.bad
}

// decodeFull reads a stored full part's usage log into d's entries, in
// place of its rollup; ok is false when raw is not in the current format.
func decodeFull(d *detailView, raw []byte) bool {
	r := &reader{b: raw}
	r.header()
	models := r.models()
	entries := make([]entry, r.count(15))
	var ms int64
	for i := range entries {
		e := &entries[i]
		e.key = r.u64()
		ms += r.varint()
		e.ms, e.last = ms, ms
		e.model = r.model(len(models))
		e.u = r.usage()
		if r.bad {
			break
		}
	}
	if r.bad || len(r.b) != 0 {
		return false
	}
	d.models, d.entries = models, entries
	return true
}

// modelTable numbers the model names of one computation.
type modelTable struct {
	names []string
	index map[string]int32
}

func newModelTable() *modelTable { return &modelTable{index: map[string]int32{}} }

func (t *modelTable) intern(name string) int32 {
	i, ok := t.index[name]
	if !ok {
		i = int32(len(t.names))
		t.names = append(t.names, name)
		t.index[name] = i
	}
	return i
}
