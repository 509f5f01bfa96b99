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
// items are handed over at the end of each Feed under the decision so far
// and then dropped; a later record that changes the decision (its first
// response-item reply, its first compaction record) makes the follow read
// the file again from its start, once: opts.Inherit forgets what was
// handed over, and every item is handed over again. A decision only moves
// towards a better source, so that happens a few times in a file's life
// at most, mostly while it is small.
func (*Source) Follow(env transcript.Env, path string, opts transcript.ParseOptions) transcript.Follow {
	if !strings.HasSuffix(path, ".jsonl") {
		return nil
	}
	f := &follow{path: path, opts: opts}
	f.reset()
	return f
}

type follow struct {
	path  string
	opts  transcript.ParseOptions // the caller's
	p     *parser
	lines int
	fed   int64 // bytes consumed from the file's start
	// baseRead: the original's history a 0.169 fork points at was read.
	baseRead bool
	// fixed: items were handed over under the decisions own and inh.
	fixed    bool
	own, inh keepSet
	ownSent  int // own items handed over
	inhSent  int // inherited items handed over
	// rebuilds counts the reads of the file from its start after the
	// first (a test reads it).
	rebuilds int
}

// reset starts the parse afresh.
func (f *follow) reset() {
	popts := f.opts
	popts.Item, popts.Inherit = nil, nil // items are handed over by hand
	f.p = newParser(f.path, popts)
	f.lines, f.fed, f.baseRead, f.fixed, f.ownSent, f.inhSent = 0, 0, false, false, 0, 0
}

// Feed implements transcript.Follow.
func (f *follow) Feed(ctx context.Context, r io.Reader) (int64, error) {
	n, err := f.feed(ctx, r)
	if err != nil {
		return n, err
	}
	if f.opts.Item == nil || f.opts.SummaryOnly {
		return n, nil
	}
	if f.handOver() {
		return n, nil
	}
	// The decision changed after items were handed over: read the file
	// again, from the same descriptor when there is one.
	f.rebuilds++
	fed := f.fed
	ra, ok := r.(io.ReaderAt)
	if !ok {
		fd, err := transcript.OpenFile(f.path)
		if err != nil {
			return n, fmt.Errorf("read codex rollout again: %w", err)
		}
		defer fd.Close()
		ra = fd
	}
	if f.opts.Inherit != nil {
		f.opts.Inherit()
	}
	f.reset()
	m, err := f.feed(ctx, io.NewSectionReader(ra, 0, fed))
	if err != nil {
		return n, err
	}
	if m != fed {
		return n, fmt.Errorf("read codex rollout again: %d of %d bytes", m, fed)
	}
	f.handOver()
	return n, nil
}

// feed parses the complete lines of r and, once its session_meta is read,
// the original's history a fork points at.
func (f *follow) feed(ctx context.Context, r io.Reader) (int64, error) {
	n, err := transcript.FeedLines(ctx, r, &f.lines, func(n int, raw []byte, tooLong bool) {
		if tooLong {
			f.p.warnf(n, "longer than %d bytes; skipped", transcript.DefaultMaxLine)
			return
		}
		f.p.line(n, raw)
	})
	f.fed += n
	if err != nil {
		return n, fmt.Errorf("read codex rollout: %w", err)
	}
	if f.p.historyBase > 0 && !f.baseRead {
		f.baseRead = true
		if err := f.p.readHistoryBase(ctx); err != nil {
			return n, err
		}
	}
	return n, nil
}

// handOver passes the items parsed since the last call to opts.Item and
// drops them, reporting false, with nothing passed, when what was handed
// over before is no longer the start of what a whole parse would give.
func (f *follow) handOver() bool {
	own := f.p.keepSet()
	var inh keepSet
	var inherited []transcript.Item
	if f.p.inherit != nil {
		inh = f.p.inherit.keepSet()
		inherited = f.p.inheritedItems()
	}
	if f.fixed && (own != f.own || inh != f.inh || len(inherited) < f.inhSent ||
		(len(inherited) > f.inhSent && f.ownSent > 0)) {
		return false
	}
	f.fixed, f.own, f.inh = true, own, inh
	for _, it := range inherited[f.inhSent:] {
		f.opts.Item(it)
	}
	f.inhSent = len(inherited)
	for _, it := range f.p.kept(own) {
		f.opts.Item(it)
		f.ownSent++
	}
	f.p.items, f.p.tags = nil, nil
	return true
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
