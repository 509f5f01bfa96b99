package transcript

import "hash/maphash"

// IDSet is a set of ids (tool call ids, message keys, record uuids) that a
// parse must remember for a whole transcript, to count each once or to
// see one come back. It keeps 8 bytes of hash per id, in open-addressed
// tables at most three quarters full, rather than the ids in a map: a
// gigabyte Claude Code transcript holds about a million of them, 36 MB
// as a map[uint64]struct{} and more as strings, about 15 MB here (issue
// 22: a parse's memory is bounded, not the file's). The tables are
// sharded by hash so that none grows by much at once. Two different ids
// are taken for one with probability 2^-64 per pair; the seed is per
// set, so no file can be written to collide.
type IDSet struct {
	seed   maphash.Seed
	shards [][]uint64 // by the hash's top bits; 0 marks a free slot
	counts []int
}

const idShardBits = 6

// Add adds id, reporting whether it was new.
func (s *IDSet) Add(id string) bool {
	if s.shards == nil {
		s.seed = maphash.MakeSeed()
		s.shards = make([][]uint64, 1<<idShardBits)
		s.counts = make([]int, 1<<idShardBits)
	}
	h := maphash.String(s.seed, id)
	if h == 0 {
		h = 1
	}
	i := h >> (64 - idShardBits)
	if t := s.shards[i]; (s.counts[i]+1)*4 > len(t)*3 {
		u := make([]uint64, max(8, 2*len(t)))
		for _, x := range t {
			if x != 0 {
				insertHash(u, x)
			}
		}
		s.shards[i] = u
	}
	if !insertHash(s.shards[i], h) {
		return false
	}
	s.counts[i]++
	return true
}

// insertHash adds h to t, a table with a free slot, by linear probing
// from its low bits; false when h is there already.
func insertHash(t []uint64, h uint64) bool {
	mask := uint64(len(t) - 1)
	for j := h & mask; ; j = (j + 1) & mask {
		switch t[j] {
		case 0:
			t[j] = h
			return true
		case h:
			return false
		}
	}
}

// maxCallNames bounds the calls a CallNames remembers.
const maxCallNames = 1 << 12

// CallNames remembers the tool names of the latest tool calls, by call id,
// for the results that answer them. A result comes soon after its call,
// so only the latest maxCallNames calls are kept: a transcript's every
// call would grow with the file (issue 22), and a result answering a call
// that many calls back is left without a name, as one whose call is
// missing is.
type CallNames struct {
	m     map[string]callName
	ring  []string // the ids set, oldest at next once full
	next  int
	count uint64
}

type callName struct {
	names [2]string
	seq   uint64 // which Set wrote it, so that eviction spares a newer one
}

// Set records the canonical and raw tool name of call id.
func (c *CallNames) Set(id string, names [2]string) {
	if c.m == nil {
		c.m = map[string]callName{}
	}
	c.count++
	if len(c.ring) < maxCallNames {
		c.ring = append(c.ring, id)
	} else {
		old := c.ring[c.next]
		if n, ok := c.m[old]; ok && n.seq == c.count-maxCallNames {
			delete(c.m, old)
		}
		c.ring[c.next] = id
		c.next = (c.next + 1) % maxCallNames
	}
	c.m[id] = callName{names: names, seq: c.count}
}

// Get returns the names of call id.
func (c *CallNames) Get(id string) ([2]string, bool) {
	n, ok := c.m[id]
	return n.names, ok
}
