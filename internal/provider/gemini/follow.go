package gemini

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/musterhq/muster/internal/transcript"
)

// openTail is how many of a chat's last messages a Follow keeps open:
// Gemini CLI rewrites its latest message in place (0.61.0 rewrites a
// gemini message once its tool calls finish), so those are built anew on
// each Transcripts and their items returned there, not streamed.
var openTail = 4

// settleBatch is how many more messages than openTail a Feed holds before
// it builds the oldest. A variable for tests.
var settleBatch = 256

// Follow implements transcript.Follower for a JSONL chat file, a log that
// grows by appends although its records rewrite earlier messages (see the
// package doc). The log's state is kept between feeds; every message but
// the last openTail is built once, its items streamed, and dropped (only
// its id is kept). A record that changes a message built already (a
// rewind, a "$set" or "$snapshot" of the whole list, as 0.61.0 writes at
// start and at exit, a new session id) makes the follow read the file
// again from its start. A legacy .json chat is one document the CLI
// rewrites whole: it is not followed (nil). A .jsonl that turns out to be
// one document is parsed whole on every Feed.
func (*Source) Follow(env transcript.Env, path string, opts transcript.ParseOptions) transcript.Follow {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return nil
	}
	f := &follow{path: path, opts: opts, roots: map[string]projectNotes{}}
	f.reset()
	return f
}

type projectNotes struct {
	root  string
	notes []string
}

type follow struct {
	path  string
	opts  transcript.ParseOptions
	c     *conversation
	b     *builder // the settled messages
	sid   string   // the session id b's messages were built with
	lines int
	fed   int64
	// first: the first non-empty line was read; document: it was not
	// JSON, so the file is one document, parsed whole (doc).
	first, document bool
	doc             *transcript.Transcript
	roots           map[string]projectNotes // projectRoot by project hash
	// hold: lines up to this one are not settled while they are fed.
	hold int
	// rebuilds counts the reads of the file from its start after the
	// first (a test reads it).
	rebuilds int
}

func (f *follow) reset() {
	f.c = &conversation{index: map[string]int{}}
	f.b = newBuilder(f.path, f.opts)
	f.sid, f.lines, f.fed, f.first = "", 0, 0, false
}

// Feed implements transcript.Follow.
func (f *follow) Feed(ctx context.Context, r io.Reader) (int64, error) {
	if f.document {
		return 0, f.whole(r)
	}
	n, err := f.feed(ctx, r)
	if err != nil {
		return n, err
	}
	if f.document {
		// Nothing consumed: the next Feed reads the document from its
		// start again.
		return 0, f.whole(r)
	}
	if f.c.touched || (f.c.settled > 0 && f.c.sessionID != f.sid) {
		f.rebuilds++
		fed := f.fed
		ra, done, err := f.readerAt(r)
		if err != nil {
			return n, err
		}
		defer done()
		if f.opts.Inherit != nil {
			f.opts.Inherit()
		}
		// Up to the record that changed a settled message, nothing is
		// settled this time: that record applies as in a whole parse.
		hold := f.lines
		f.reset()
		f.hold = hold
		if _, err := f.feed(ctx, io.NewSectionReader(ra, 0, fed)); err != nil {
			return n, err
		}
	}
	f.settle()
	return n, nil
}

func (f *follow) feed(ctx context.Context, r io.Reader) (int64, error) {
	n, err := transcript.FeedLines(ctx, r, &f.lines, func(n int, raw []byte, tooLong bool) {
		if !f.first {
			l := bytes.TrimSpace(raw)
			if len(l) == 0 && !tooLong {
				return
			}
			f.first = true
			f.document = !tooLong && !transcript.ValidJSON(l)
		}
		if !f.document {
			f.c.line(n, raw, tooLong)
			// A first read of a long log builds as it goes, so that its
			// messages are never held at once.
			if len(f.c.msgs)-f.c.settled > openTail+settleBatch && n > f.hold {
				f.settle()
			}
		}
	})
	f.fed += n
	if err != nil {
		return n, fmt.Errorf("read gemini transcript: %w", err)
	}
	return n, nil
}

// settle builds every message but the last openTail, streaming their
// items, and drops them.
func (f *follow) settle() {
	c := f.c
	for len(c.msgs)-c.settled > openTail {
		if c.settled == 0 {
			f.sid, f.b.sessionID = c.sessionID, c.sessionID
		}
		f.b.message(c.msgs[c.settled])
		c.msgs[c.settled] = transcript.Value{}
		c.settled++
	}
}

// readerAt is r, or the file opened again when r cannot read at an
// offset; done closes what it opened.
func (f *follow) readerAt(r io.Reader) (io.ReaderAt, func(), error) {
	if ra, ok := r.(io.ReaderAt); ok {
		return ra, func() {}, nil
	}
	fd, err := transcript.OpenFile(f.path)
	if err != nil {
		return nil, nil, fmt.Errorf("read gemini transcript again: %w", err)
	}
	return fd, func() { fd.Close() }, nil
}

// whole parses the file as Parse does.
func (f *follow) whole(r io.Reader) error {
	f.rebuilds++
	ra, done, err := f.readerAt(r)
	if err != nil {
		return err
	}
	defer done()
	if f.opts.Inherit != nil {
		f.opts.Inherit()
	}
	t, hash := read(io.NewSectionReader(ra, 0, 1<<62), f.path, false, f.opts)
	f.doc = f.withRoot(t, hash)
	return nil
}

// withRoot adds the project's root and its notes, as Parse does, read
// once per project hash.
func (f *follow) withRoot(t *transcript.Transcript, hash string) *transcript.Transcript {
	p, ok := f.roots[hash]
	if !ok {
		p.root, p.notes = projectRoot(f.path, hash)
		f.roots[hash] = p
	}
	if p.root != "" {
		t.CWD = p.root
	}
	t.Warnings = append(t.Warnings, p.notes...)
	return t
}

// Transcripts implements transcript.Follow: the settled messages' items
// were streamed (opts.Item); the open ones' are in Items.
func (f *follow) Transcripts() []*transcript.Transcript {
	if f.document {
		if f.doc == nil {
			return nil
		}
		return []*transcript.Transcript{f.doc}
	}
	b := f.b.clone()
	b.sessionID = f.c.sessionID
	for _, m := range f.c.msgs[f.c.settled:] {
		b.message(m)
	}
	c := *f.c
	c.warnings = slices.Clone(c.warnings)
	return []*transcript.Transcript{f.withRoot(c.finish(b), c.projectHash)}
}

// clone is a copy of b that builds more messages without changing b; its
// items go to its transcript's Items, after b's own (when b keeps them).
func (b *builder) clone() *builder {
	c := *b
	t := *b.t
	t.Items = slices.Clone(t.Items)
	t.Warnings = slices.Clone(t.Warnings)
	t.UsageLog = slices.Clone(t.UsageLog)
	c.t = &t
	c.sink = nil
	c.byModel = maps.Clone(b.byModel)
	if b.budget != nil {
		budget := *b.budget
		c.budget = &budget
	}
	return &c
}
