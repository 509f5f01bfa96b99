package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/musterhq/muster/internal/transcript"
)

// errNotFollowed says the source parses this file whole.
var errNotFollowed = errors.New("not an append-only log")

// maxFollowed bounds the parses in progress an index keeps: the files
// agents are writing now are few, and each keeps its session's summary
// state and full-text row (capped by capColumn).
const maxFollowed = 16

// tailCheck is how many bytes before a followed file's offset are kept to
// see it rewritten in place (same inode, same or larger size).
const tailCheck = 64

// followCache keeps, for the transcripts that changed most recently, the
// parse in progress and where it stopped, so that the daemon's watcher
// reads only what an agent appended (issue 22: every append re-parsed the
// whole transcript, 72 % of a core at 200 MB).
type followCache struct {
	mu      sync.Mutex
	entries map[string]*followed
	order   []string // least recently used first
}

type followed struct {
	f    transcript.Follow
	doc  *docBuilder
	off  int64       // bytes fed
	fi   os.FileInfo // the file fed, to see it replaced
	tail []byte      // the bytes just before off
}

func newFollowCache() *followCache {
	return &followCache{entries: map[string]*followed{}}
}

// take removes and returns path's parse in progress, if any: the caller
// owns it until put.
func (c *followCache) take(path string) *followed {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[path]
	delete(c.entries, path)
	for i, p := range c.order {
		if p == path {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	return e
}

func (c *followCache) put(path string, e *followed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.order) >= maxFollowed {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	c.entries[path] = e
	c.order = append(c.order, path)
}

// follow parses what was appended to j's file since the last call for it,
// or the whole file when it is new to the cache, was truncated or
// replaced; it returns the transcripts as Parse would, with their
// full-text rows, and the bytes it read.
func (c *followCache) follow(ctx context.Context, src transcript.Follower, env transcript.Env, path string) ([]*transcript.Transcript, *docBuilder, int64, error) {
	fd, err := transcript.OpenFile(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil {
		return nil, nil, 0, err
	}
	e := c.take(path)
	if e == nil || !os.SameFile(e.fi, fi) || fi.Size() < e.off || !e.tailMatches(fd) {
		e = &followed{doc: &docBuilder{}}
		e.f = src.Follow(env, path, transcript.ParseOptions{Item: e.doc.add, Inherit: e.doc.reset, NoUsageLog: true})
		if e.f == nil {
			return nil, nil, 0, errNotFollowed
		}
	}
	if _, err := fd.Seek(e.off, io.SeekStart); err != nil {
		return nil, nil, 0, err
	}
	n, err := e.f.Feed(ctx, fd)
	if err != nil {
		return nil, nil, n, err
	}
	e.off += n
	e.fi = fi
	e.tail = e.tail[:0]
	if k := min(e.off, tailCheck); k > 0 {
		e.tail = append(e.tail, make([]byte, k)...)
		if _, err := fd.ReadAt(e.tail, e.off-k); err != nil {
			return nil, nil, n, fmt.Errorf("read %s: %w", path, err)
		}
	}
	ts := e.f.Transcripts()
	c.put(path, e)
	doc := e.doc
	if len(ts) == 1 && len(ts[0].Items) > 0 {
		// Items a Follow returns rather than streams are not settled (a
		// record the agent may still rewrite): they join a copy of the
		// row, never the row the next Feed adds to.
		doc = e.doc.clone()
	}
	return ts, doc, n, nil
}

// tailMatches reports whether the bytes before the offset are still those
// fed: a file rewritten in place is parsed again from its start.
func (e *followed) tailMatches(fd *os.File) bool {
	if len(e.tail) == 0 {
		return true
	}
	buf := make([]byte, len(e.tail))
	if _, err := fd.ReadAt(buf, e.off-int64(len(buf))); err != nil {
		return false
	}
	return bytes.Equal(buf, e.tail)
}
