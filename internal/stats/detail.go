package stats

import (
	"encoding/binary"
	"hash/fnv"
	"maps"
	"slices"
	"time"
	"unsafe"

	"github.com/musterhq/muster/internal/transcript"
)

// The stored analysis is binary, not JSON: a warm `muster stats` decodes
// every session's analysis, and with a usage log of thousands of responses
// per session JSON decoding was most of its time. Layout (all integers
// unsigned varints unless said otherwise, strings a length then bytes):
//
//	magic byte 0xA5, format byte 2
//	tools:   count, then (name, calls) each
//	tool errors
//	files:   count, then (path, edits, added, removed) each
//	models:  count, then name each
//	usage:   count, then each: key hash (8 bytes little endian, 0 = no key),
//	         time in unix ms as a signed varint delta from the previous entry
//	         (0 = unknown), model index, input, output, cache read,
//	         cache write, reasoning
const (
	detailMagic  = 0xA5
	detailFormat = 2
)

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

// encodeDetail writes d and its usage log in the stored format.
func encodeDetail(d Detail, log []transcript.UsageEntry) []byte {
	b := []byte{detailMagic, detailFormat}
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	num := func(n int64) { b = binary.AppendUvarint(b, uint64(max(n, 0))) }
	b = binary.AppendUvarint(b, uint64(len(d.Tools)))
	for _, name := range slices.Sorted(maps.Keys(d.Tools)) {
		str(name)
		num(int64(d.Tools[name]))
	}
	num(int64(d.ToolErrors))
	b = binary.AppendUvarint(b, uint64(len(d.Files)))
	for _, p := range slices.Sorted(maps.Keys(d.Files)) {
		fc := d.Files[p]
		str(p)
		num(int64(fc.Edits))
		num(int64(fc.Added))
		num(int64(fc.Removed))
	}
	var models []string
	index := map[string]int{}
	for _, e := range log {
		if _, ok := index[e.Model]; !ok {
			index[e.Model] = len(models)
			models = append(models, e.Model)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(models)))
	for _, m := range models {
		str(m)
	}
	b = binary.AppendUvarint(b, uint64(len(log)))
	var prev int64
	for _, e := range log {
		b = binary.LittleEndian.AppendUint64(b, usageKey(e.Key))
		ms := unixMS(e.Time)
		b = binary.AppendVarint(b, ms-prev)
		prev = ms
		b = binary.AppendUvarint(b, uint64(index[e.Model]))
		num(e.Input)
		num(e.Output)
		num(e.CacheRead)
		num(e.CacheWrite)
		num(e.Reasoning)
	}
	return b
}

// entry is one decoded usage log entry. It holds no pointer (the model is
// an index), so the entries of thousands of sessions cost the garbage
// collector nothing to scan.
type entry struct {
	key   uint64
	ms    int64 // 0: unknown
	model int32 // into detailView.models, then into a modelTable
	u     transcript.Usage
	// cost is a provider-recorded cost share; recorded says to use it
	// instead of the price table.
	cost     float64
	recorded bool
}

// detailView is a decoded analysis, in slices: cheaper to build and to
// aggregate than the maps of Detail.
type detailView struct {
	tools   []toolCount
	errors  int
	files   []FileStat
	models  []string
	entries []entry
	// logged says the analysis has a usage log (a format without one
	// leaves it empty, and the session totals stand in for it).
	logged bool
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

// decodeDetail reads a stored analysis; ok is false when raw is missing or
// not in the current format (the session then counts from its summary).
// The strings of the result point into raw, which must not change.
func decodeDetail(raw []byte) (detailView, bool) {
	var d detailView
	if len(raw) < 2 || raw[0] != detailMagic || raw[1] != detailFormat {
		return d, false
	}
	r := &reader{b: raw[2:]}
	d.tools = make([]toolCount, r.count(2))
	for i := range d.tools {
		d.tools[i] = toolCount{r.str(), int(r.int())}
	}
	d.errors = int(r.int())
	d.files = make([]FileStat, r.count(4))
	for i := range d.files {
		d.files[i] = FileStat{Path: r.str(), FileChange: FileChange{Edits: int(r.int()), Added: int(r.int()), Removed: int(r.int())}}
	}
	models := make([]string, r.count(1))
	for i := range models {
		models[i] = r.str()
	}
	d.models = models
	d.entries = make([]entry, r.count(15))
	var ms int64
	for i := range d.entries {
		e := &d.entries[i]
		e.key = r.u64()
		ms += r.varint()
		e.ms = ms
		mi := r.uvarint()
		if mi >= uint64(len(models)) || mi > 1<<30 {
			r.bad = true
			break
		}
		e.model = int32(mi)
		e.u = transcript.Usage{Input: r.int(), Output: r.int(), CacheRead: r.int(), CacheWrite: r.int(), Reasoning: r.int()}
	}
	if r.bad || len(r.b) != 0 {
		return detailView{}, false
	}
	d.logged = len(d.entries) > 0
	return d, true
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
