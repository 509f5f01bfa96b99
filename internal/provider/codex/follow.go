package codex

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/musterhq/muster/internal/transcript"
)

// Follow implements transcript.Follower for JSONL rollouts, which Codex
// only appends to (a TypeScript-era .json document is parsed whole). The
// parser's state is kept between feeds, so that each one parses only the
// lines appended (issue 22: a 200 MB rollout was re-read on every append).
//
// Which record kinds a rollout's items come from is decided late (keepSet:
// an assistant reply is written both as a response item and as an event,
// and only the best source present is kept). With opts.Item set, the
// items are handed over under the decision so far whenever a bounded
// number of them is held (parser.flush) and at the end of each Feed, and
// then dropped: a huge rollout's first read holds a few megabytes, not
// the file (issue 22: 450 MB for a 200 MB rollout). A later record that
// would take back an item handed over or dropped (its first response-item
// reply, its first compaction record) makes the follow read the file
// again from its start, once, under the decision then known. A decision
// only moves towards a better source, so that happens a few times in a
// file's life at most, mostly while it is small.
func (*Source) Follow(env transcript.Env, path string, opts transcript.ParseOptions) transcript.Follow {
	if !strings.HasSuffix(path, ".jsonl") {
		return nil
	}
	return newFollow(path, opts)
}

func newFollow(path string, opts transcript.ParseOptions) *follow {
	f := &follow{path: path, opts: opts}
	f.reset()
	return f
}

// A follow's items come in streams, one per depth of the parser chain
// (parser.chain): 0 the rollout's own, 1 the original's history it was
// forked from, 2 that original's own original, and so on. A whole parse
// gives the deepest stream first (each marked inherited), the own last.
type follow struct {
	path  string
	opts  transcript.ParseOptions // the caller's
	p     *parser
	lines int
	fed   int64 // bytes consumed from the file's start
	// whole: a last line without its newline is parsed too (Parse, which
	// reads a file to its end).
	whole bool
	// fates says, by depth, what became of the items of each tag so far.
	fates []fate
	// stale: a record took back what was handed over, or an inherited
	// item came after a later stream's; the rest of the Feed only
	// decides, and the file is read again at its end.
	stale bool
	// want, during a read again, is the decision by depth; only the items
	// of depth pass are handed over, one stream a pass.
	want []keepSet
	pass int
	// rebuilds counts the reads of the file from its start after the
	// first (a test reads it).
	rebuilds int
}

// fate is what became of a stream's items.
type fate struct {
	sent, dropped [numTags]bool // some item of that tag was handed over, dropped
	emitted       bool          // some item was handed over
}

// streaming reports whether items are handed over rather than kept.
func (f *follow) streaming() bool { return f.opts.Item != nil && !f.opts.SummaryOnly }

// reset starts the parse afresh.
func (f *follow) reset() {
	popts := f.opts
	popts.Item, popts.Inherit = nil, nil // items are handed over by hand
	f.p = newParser(f.path, popts)
	if f.streaming() {
		f.p.flush = f.flush
	}
	f.lines, f.fed, f.stale = 0, 0, false
}

func (f *follow) fate(depth int) *fate {
	for len(f.fates) <= depth {
		f.fates = append(f.fates, fate{})
	}
	return &f.fates[depth]
}

// Feed implements transcript.Follow.
func (f *follow) Feed(ctx context.Context, r io.Reader) (int64, error) {
	n, err := f.feed(ctx, r)
	if err != nil || !f.streaming() {
		return n, err
	}
	f.flush()
	if !f.stale {
		return n, nil
	}
	// Read the file again, from the same descriptor when there is one.
	f.rebuilds++
	ra, ok := r.(io.ReaderAt)
	if !ok {
		fd, err := transcript.OpenFile(f.path)
		if err != nil {
			return n, fmt.Errorf("read codex rollout again: %w", err)
		}
		defer fd.Close()
		ra = fd
	}
	return n, f.readAgain(ctx, ra)
}

// feed parses the lines of r.
func (f *follow) feed(ctx context.Context, r io.Reader) (int64, error) {
	n, err := scanRollout(ctx, f.p, r, &f.lines, f.whole)
	f.fed += n
	return n, err
}

// readAgain parses the bytes fed so far again, once for each stream,
// deepest first, handing over that stream's items under the decisions
// the whole of them made: exact, and bounded whatever the order of the
// records.
func (f *follow) readAgain(ctx context.Context, ra io.ReaderAt) error {
	fed := f.fed
	chain := f.p.chain()
	want := make([]keepSet, len(chain))
	for _, q := range chain {
		want[q.depth] = f.decision(chain, q)
	}
	if f.opts.Inherit != nil {
		f.opts.Inherit()
	}
	f.fates = f.fates[:0]
	f.want = want
	defer func() { f.want = nil }()
	for f.pass = len(want) - 1; f.pass >= 0; f.pass-- {
		f.reset()
		m, err := f.feed(ctx, io.NewSectionReader(ra, 0, fed))
		if err != nil {
			return err
		}
		if m != fed {
			return fmt.Errorf("read codex rollout again: %d of %d bytes", m, fed)
		}
		f.flush()
	}
	return nil
}

// decision is the keepSet of q, a parser of chain, as a whole parse would
// apply it: a stream with nothing to show (parser.result is nil), or
// inherited through one, keeps no item.
func (f *follow) decision(chain []*parser, q *parser) keepSet {
	k := q.keepSet()
	for _, c := range chain[1 : q.depth+1] {
		if !c.shows() {
			return keepSet{prompt: k.prompt}
		}
	}
	return k
}

// flush hands over the items every stream holds, or drops them (a stream
// the current pass does not hand over; a stale follow's), and marks the
// follow stale when the decisions so far would take back what was handed
// over.
func (f *follow) flush() {
	chain := f.p.chain()
	if f.want == nil && !f.stale && !f.settled(chain) {
		f.stale = true
	}
	for i := len(chain) - 1; i >= 0; i-- {
		q := chain[i]
		switch {
		case f.stale:
		case f.want == nil:
			f.handOver(q, f.decision(chain, q))
		case q.depth == f.pass:
			f.handOver(q, f.want[q.depth])
		}
		clear(q.items)
		q.items, q.tags, q.held = q.items[:0], q.tags[:0], 0
	}
}

// settled reports whether the decisions so far keep every item handed
// over and drop every item dropped, and whether the items held can be
// handed over in a whole parse's order (no later stream has begun).
func (f *follow) settled(chain []*parser) bool {
	for _, q := range chain {
		k := f.decision(chain, q)
		fa := f.fate(q.depth)
		for g := range numTags {
			if fa.sent[g] && !k.keep[g] || fa.dropped[g] && k.keep[g] {
				return false
			}
		}
		for i := range q.items {
			if k.keep[q.tags[i]] {
				for d := range q.depth {
					if f.fate(d).emitted {
						return false
					}
				}
				break
			}
		}
	}
	return true
}

// handOver passes q's items that k keeps to opts.Item.
func (f *follow) handOver(q *parser, k keepSet) {
	fa := f.fate(q.depth)
	for i, it := range q.items {
		g := q.tags[i]
		if !k.keep[g] {
			fa.dropped[g] = true
			continue
		}
		it.Inherited = q.depth > 0
		f.opts.Item(it)
		fa.sent[g], fa.emitted = true, true
	}
}

// Transcripts implements transcript.Follow: the items were handed over by
// Feed when opts.Item is set.
func (f *follow) Transcripts() []*transcript.Transcript {
	t := f.p.result(f.opts.Item == nil)
	if t == nil {
		return nil
	}
	return []*transcript.Transcript{t}
}
