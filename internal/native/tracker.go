package native

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/transcript"
)

// Limits of transcript reading.
const (
	maxLine     = 16 << 20 // a longer line is skipped
	readPerTick = 4 << 20  // bytes read of one transcript per poll; the rest waits
	chunkSize   = 64 << 10
	locateEvery = 2 * time.Second  // retry finding a transcript
	switchEvery = 5 * time.Second  // look for a newer one (a /clear) when found without an id
	walkEvery   = 30 * time.Second // search every project or date folder for an id
)

var chunkPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// tracker follows the transcript of one agent run of a surface, with the
// provider's turn reader.
type tracker struct {
	reader  provider.TurnReader
	env     transcript.Env
	parser  provider.TurnParser
	locator provider.TurnLocator
	path    string      // "" until located
	byID    string      // the native id path was found by; "" when found by scanning
	off     int64       // bytes of path consumed
	partial []byte      // an incomplete last line
	skip    bool        // the line being read is over maxLine: drop it
	modTime time.Time   // of path when last read
	file    os.FileInfo // path's file when last read, to see it replaced
	skipped string      // the path last logged as not a regular file
	// long counts the lines dropped for their length, longNoted those
	// noted (Estimator.noteSkipped).
	long, longNoted int
	recs            []provider.Turn
	// resumed: the transcript's first record predates the agent's launch
	// (Estimator.cutoff).
	resumed bool

	nextLocate time.Time
	nextSwitch time.Time
	nextWalk   time.Time
}

// newTracker returns a tracker for an agent of prov, or nil when the
// provider has no turn reader.
func newTracker(prov string, env transcript.Env) *tracker {
	r, ok := all.As[provider.TurnReader](prov)
	if !ok {
		return nil
	}
	return &tracker{reader: r, env: env, parser: r.NewTurnParser(), locator: r.NewTurnLocator(env)}
}

// follow makes path the tracked transcript from its start; the locator
// starts afresh.
func (t *tracker) follow(path, byID string) {
	t.path, t.byID, t.off, t.partial, t.skip, t.modTime, t.file = path, byID, 0, nil, false, time.Time{}, nil
	t.parser = t.reader.NewTurnParser()
	t.locator = t.reader.NewTurnLocator(t.env)
}

// read consumes what was appended to the transcript since the last read,
// at most readPerTick bytes, and returns the turn records of its complete
// lines. A file that shrank or is another file (replaced by a rename) is
// read again from its start.
func (t *tracker) read() ([]provider.Turn, error) {
	t.recs = t.recs[:0]
	if t.path == "" {
		return nil, nil
	}
	// Most polls find nothing new: one stat, no open.
	// Lstat: a symbolic link (or its loop) is refused by OpenFile, and
	// must say so rather than fail to stat.
	if fi, err := os.Lstat(t.path); err != nil {
		return nil, err
	} else if fi.Size() == t.off && fi.ModTime().Equal(t.modTime) {
		return nil, nil
	}
	f, err := transcript.OpenFile(t.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil
	}
	if fi.Size() < t.off || (t.file != nil && !os.SameFile(t.file, fi)) {
		t.follow(t.path, t.byID)
	}
	t.modTime, t.file = fi.ModTime(), fi
	bp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bp)
	buf := *bp
	for budget := readPerTick; budget > 0 && t.off < fi.Size(); {
		n := min(int64(len(buf)), int64(budget), fi.Size()-t.off)
		got, err := f.ReadAt(buf[:n], t.off)
		if got > 0 {
			t.off += int64(got)
			budget -= got
			t.consume(buf[:got])
		}
		if err == io.EOF || got == 0 {
			break
		}
		if err != nil {
			return t.recs, err
		}
	}
	return t.recs, nil
}

// consume splits data into lines, joining the partial line kept from the
// previous chunk, and parses the complete ones.
func (t *tracker) consume(data []byte) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			switch {
			case t.skip:
			case len(t.partial)+len(data) > maxLine:
				t.partial, t.skip = nil, true
				t.long++
			default:
				t.partial = append(t.partial, data...)
			}
			return
		}
		line := data[:i]
		data = data[i+1:]
		if t.skip {
			t.skip = false
			continue
		}
		if len(t.partial) > 0 {
			if len(t.partial)+len(line) > maxLine {
				t.partial = nil
				t.long++
				continue
			}
			t.partial = append(t.partial, line...)
			line = t.partial
		}
		t.recs = t.parser.Line(bytes.TrimSuffix(line, []byte{'\r'}), t.recs)
		if cap(t.partial) > 1<<20 {
			t.partial = nil
		} else {
			t.partial = t.partial[:0]
		}
	}
}

// safeID reports whether a native id can be part of a file name.
func safeID(id string) bool {
	return id != "" && len(id) <= 256 && !strings.ContainsAny(id, "/\\\x00") && id != "." && id != ".."
}
