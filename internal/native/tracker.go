package native

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/provider/claude"
	"github.com/musterhq/muster/internal/provider/codex"
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

// tracker follows the transcript of one agent run of a surface.
type tracker struct {
	provider string
	parser   lineParser
	path     string    // "" until located
	byID     string    // the native id path was found by; "" when found by scanning
	off      int64     // bytes of path consumed
	partial  []byte    // an incomplete last line
	skip     bool      // the line being read is over maxLine: drop it
	modTime  time.Time // of path when last read
	recs     []turnRecord

	nextLocate time.Time
	nextSwitch time.Time
	nextWalk   time.Time
	metas      map[string]codex.SessionMeta // Codex candidates, by path
}

func newTracker(provider string) *tracker {
	p := newParser(provider)
	if p == nil {
		return nil
	}
	return &tracker{provider: provider, parser: p}
}

// follow makes path the tracked transcript from its start.
func (t *tracker) follow(path, byID string) {
	t.path, t.byID, t.off, t.partial, t.skip, t.modTime = path, byID, 0, nil, false, time.Time{}
	t.parser = newParser(t.provider)
}

// read consumes what was appended to the transcript since the last read,
// at most readPerTick bytes, and returns the turn records of its complete
// lines. A file that shrank was replaced: it is read again from its start.
func (t *tracker) read() ([]turnRecord, error) {
	t.recs = t.recs[:0]
	if t.path == "" {
		return nil, nil
	}
	// Most polls find nothing new: one stat, no open.
	if fi, err := os.Stat(t.path); err != nil {
		return nil, err
	} else if fi.Size() == t.off && fi.ModTime().Equal(t.modTime) {
		return nil, nil
	}
	f, err := os.Open(t.path)
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
	if fi.Size() < t.off {
		t.follow(t.path, t.byID)
	}
	t.modTime = fi.ModTime()
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
				continue
			}
			t.partial = append(t.partial, line...)
			line = t.partial
		}
		t.recs = t.parser.line(bytes.TrimSuffix(line, []byte{'\r'}), t.recs)
		if cap(t.partial) > 1<<20 {
			t.partial = nil
		} else {
			t.partial = t.partial[:0]
		}
	}
}

// locator finds an agent's transcript on disk.
type locator struct {
	env   transcript.Env
	taken func(path string) bool // claimed by another surface
}

// safeID reports whether a native id can be part of a file name.
func safeID(id string) bool {
	return id != "" && len(id) <= 256 && !strings.ContainsAny(id, "/\\\x00") && id != "." && id != ".."
}

// claudeDirNames are the project folder names Claude Code may use for cwd:
// every character but ASCII letters and digits replaced by '-' (2.1), and
// only '/' and '.' replaced (the research capture's wording).
func claudeDirNames(cwd string) []string {
	if cwd == "" {
		return nil
	}
	all := []byte(cwd)
	some := []byte(cwd)
	for i, c := range all {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			all[i] = '-'
		}
		if c == '/' || c == '.' {
			some[i] = '-'
		}
	}
	if string(all) == string(some) {
		return []string{string(all)}
	}
	return []string{string(all), string(some)}
}

// claude finds a Claude Code transcript: projects/<enc-cwd>/<id>.jsonl
// when the native id is known (any project folder when walk is set);
// otherwise the single unclaimed main transcript of the cwd's project
// folder modified at or after cutoff, other than except.
func (l locator) claude(cwd, id string, cutoff time.Time, walk bool, except string) string {
	root := claude.ProjectsDir(l.env)
	if root == "" {
		return ""
	}
	if id != "" {
		if !safeID(id) {
			return ""
		}
		for _, d := range claudeDirNames(cwd) {
			if p := filepath.Join(root, d, id+".jsonl"); isRegular(p) {
				return p
			}
		}
		if walk {
			entries, _ := os.ReadDir(root)
			for _, e := range entries {
				if p := filepath.Join(root, e.Name(), id+".jsonl"); e.IsDir() && isRegular(p) {
					return p
				}
			}
		}
		return ""
	}
	var found []string
	for _, d := range claudeDirNames(cwd) {
		dir := filepath.Join(root, d)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".jsonl") || strings.HasPrefix(name, "agent-") || !e.Type().IsRegular() {
				continue
			}
			p := filepath.Join(dir, name)
			if p == except || l.taken(p) {
				continue
			}
			if fi, err := e.Info(); err == nil && !fi.ModTime().Before(cutoff) {
				found = append(found, p)
			}
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

// codex finds a Codex rollout: the rollout whose name carries the native id
// (today's and yesterday's date folders, or every folder when walk is set);
// otherwise the single unclaimed rollout of an interactive session in cwd
// modified at or after cutoff, other than except.
func (l locator) codex(ctx context.Context, cwd, id string, cutoff, now time.Time, walk bool, except string, metas map[string]codex.SessionMeta) string {
	home := codex.Home(l.env)
	if home == "" {
		return ""
	}
	sessions := filepath.Join(home, "sessions")
	var dirs []string
	for _, d := range []time.Time{now.Local(), now.Local().Add(-24 * time.Hour)} {
		dir := filepath.Join(sessions, d.Format("2006"), d.Format("01"), d.Format("02"))
		if len(dirs) == 0 || dirs[len(dirs)-1] != dir {
			dirs = append(dirs, dir)
		}
	}
	dirs = append(dirs, sessions)
	if id != "" {
		if !safeID(id) {
			return ""
		}
		for _, dir := range dirs {
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if name := e.Name(); codex.IsRollout(name) && strings.Contains(name, id) && e.Type().IsRegular() {
					return filepath.Join(dir, name)
				}
			}
		}
		if walk {
			files, _ := (&codex.Source{}).Discover(ctx, l.env)
			for _, f := range files {
				if strings.Contains(filepath.Base(f.Path), id) {
					return f.Path
				}
			}
		}
		return ""
	}
	var found []string
	for _, dir := range dirs {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			name := e.Name()
			if !codex.IsRollout(name) || !strings.HasSuffix(name, ".jsonl") || !e.Type().IsRegular() {
				continue
			}
			p := filepath.Join(dir, name)
			if p == except || l.taken(p) {
				continue
			}
			fi, err := e.Info()
			if err != nil || fi.ModTime().Before(cutoff) {
				continue
			}
			meta, ok := metas[p]
			if !ok {
				if meta, err = codex.ReadSessionMeta(p); err != nil {
					continue // not written yet: try again next time
				}
				metas[p] = meta
			}
			if meta.Interactive && samePath(meta.CWD, cwd) {
				found = append(found, p)
			}
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

func samePath(a, b string) bool {
	return a != "" && b != "" && filepath.Clean(a) == filepath.Clean(b)
}

func isRegular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
