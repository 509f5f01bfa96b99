package opencode

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// openTail is how many of a legacy session's last messages a Follow keeps
// open: OpenCode rewrites the message it is writing (its completion time,
// its tokens) and that message's part files (a tool's state) while the
// turn runs, and a part may be written before or after its message file,
// but not after the next message's. At least 1; a variable for tests.
var openTail = 2

// maxSessionFile bounds a session file read as a tree's: the file holds
// only the session's info; a larger one is an export, read as a stream.
const maxSessionFile = 1 << 20

// Follow implements transcript.Follower for a legacy session file
// (storage/session/<project>/<id>.json), whose session grows by message
// and part files, not by appends to the file itself. Each Feed reads the
// small session file whole (consuming nothing of it), lists the
// session's message directory when it changed, and reads only the
// message and part files that are new or whose size or mtime changed.
// Every message but the last openTail is built once, its items streamed,
// and dropped; the open ones are built anew on each Transcripts and their
// items returned there. A message file removed, or one that sorts before
// a settled message, makes the follow read the whole tree again, once. A
// settled message's files are not looked at again: a rewrite of one
// after two later messages were written is seen only when the tree is
// read again (OpenCode writes a message's files while its turn runs).
// Databases and export documents are not followed (nil).
func (*Source) Follow(env transcript.Env, path string, opts transcript.ParseOptions) transcript.Follow {
	if filepath.Ext(path) != ".json" || filepath.Base(filepath.Dir(filepath.Dir(path))) != "session" {
		return nil
	}
	f := &follow{path: path, opts: opts, storage: filepath.Dir(filepath.Dir(filepath.Dir(path))), projects: map[string]projectCWD{}}
	f.reset()
	return f
}

// stamp is what says a file changed.
type stamp struct {
	size int64
	mod  time.Time
}

func stampOf(fi fs.FileInfo) stamp { return stamp{fi.Size(), fi.ModTime()} }

type projectCWD struct {
	cwd, note string
}

// jsonFile is one message or part file as last read.
type jsonFile struct {
	st   stamp
	v    transcript.Value
	ok   bool
	note string // why it was skipped, as readJSON words it
}

// openMessage is a message not settled yet: its file and its parts'.
type openMessage struct {
	name  string // the file's stem
	file  jsonFile
	key   msgKey
	parts map[string]*jsonFile // by file name
}

// msgKey orders messages as parseTree does.
type msgKey struct {
	created time.Time
	id      string
}

func (a msgKey) compare(b msgKey) int {
	return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.id, b.id))
}

type follow struct {
	path, storage string
	opts          transcript.ParseOptions
	projects      map[string]projectCWD

	// whole is the last whole parse of a session file that is not a
	// tree (an export, a broken file), parsed again on each Feed.
	whole *transcript.Transcript

	id       string   // the session's id, "" until read
	b        *builder // the settled messages, built without the session's info
	settled  bool     // b holds a message
	last     msgKey   // the last settled message's
	dir      stamp    // the message directory when last listed
	known    map[string]bool
	open     []*openMessage       // in parseTree's order
	failed   map[string]*jsonFile // message files that did not parse, by name
	info     transcript.Value     // the session file's object
	rebuilds int                  // reads of the whole tree after the first (a test reads it)
	read     int64                // bytes of message and part files read (a test reads it)
}

func (f *follow) reset() {
	f.b = newBuilder(f.path, info{}, f.opts)
	f.settled, f.last, f.dir = false, msgKey{}, stamp{}
	f.known, f.failed, f.open = map[string]bool{}, map[string]*jsonFile{}, nil
}

// Feed implements transcript.Follow; r is the session file from its start.
func (f *follow) Feed(ctx context.Context, r io.Reader) (int64, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxSessionFile+1))
	if err != nil {
		return 0, fmt.Errorf("read opencode session: %w", err)
	}
	v := transcript.Parse(string(raw))
	id := v.Get("id")
	msgs := v.Get("messages")
	tree := len(raw) <= maxSessionFile && transcript.ValidJSON(raw) && v.IsObject() && id.IsString() &&
		(!msgs.Exists() || (msgs.IsArray() && len(msgs.Array()) == 0))
	if si := id.Str(); !tree || si == "" || si == "." || si == ".." || strings.ContainsAny(si, `/\`) {
		// Not a tree this follow reads (an export, a broken file):
		// parsed whole as a stream, as Parse does.
		ra, ok := r.(io.ReaderAt)
		if !ok {
			fd, err := transcript.OpenFile(f.path)
			if err != nil {
				return 0, fmt.Errorf("read opencode session: %w", err)
			}
			defer fd.Close()
			ra = fd
		}
		if f.opts.Inherit != nil {
			f.opts.Inherit()
		}
		f.id, f.whole = "", parseJSON(io.NewSectionReader(ra, 0, 1<<62), f.path, f.opts)
		f.reset()
		return 0, nil
	}
	f.whole, f.info = nil, v
	if id.Str() != f.id {
		if f.id != "" && f.opts.Inherit != nil {
			f.opts.Inherit()
		}
		f.id = id.Str()
		f.reset()
	}
	if !f.scan(ctx) {
		f.rebuilds++
		if f.opts.Inherit != nil {
			f.opts.Inherit()
		}
		f.reset()
		f.scan(ctx)
	}
	f.settle()
	for _, m := range f.open {
		f.readParts(m)
	}
	return 0, ctx.Err()
}

// scan reads what is new or changed of the session's messages, reporting
// false when what was settled no longer holds (a message file removed, a
// new one that sorts before a settled one).
func (f *follow) scan(ctx context.Context) bool {
	dir := filepath.Join(f.storage, "message", f.id)
	if fi, err := os.Stat(dir); err == nil && stampOf(fi) != f.dir {
		f.dir = stampOf(fi)
		// Names only, unsorted: a long session's directory is listed on
		// every new message, and only the new names are looked at.
		var names []string
		if d, err := os.Open(dir); err == nil {
			names, _ = d.Readdirnames(-1)
			d.Close()
		}
		present := 0
		var fresh []string
		for _, name := range names {
			switch {
			case filepath.Ext(name) != ".json":
			case f.known[name]:
				present++
			default:
				fresh = append(fresh, name)
			}
		}
		if present < len(f.known) {
			return false // a message file is gone
		}
		slices.Sort(fresh)
		for _, name := range fresh {
			p := filepath.Join(dir, name)
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				continue // sortedJSON skips directories
			}
			if err := ctx.Err(); err != nil {
				f.dir = stamp{} // list it again next time
				return true
			}
			f.known[name] = true
			jf := f.readFile(p, nil)
			if !jf.ok {
				f.failed[name] = jf
				continue
			}
			if !f.addOpen(name, jf) {
				return false
			}
		}
	} else if err != nil && len(f.known) > 0 {
		return false
	}
	// A file that did not parse may have been written meanwhile.
	for _, name := range slices.Sorted(maps.Keys(f.failed)) {
		jf := f.failed[name]
		if again := f.readFile(filepath.Join(dir, name), jf); again != jf {
			f.failed[name] = again
			if again.ok {
				delete(f.failed, name)
				if !f.addOpen(name, again) {
					return false
				}
			}
		}
	}
	for _, m := range f.open {
		if again := f.readFile(filepath.Join(dir, m.name+".json"), &m.file); again != &m.file {
			if !again.ok {
				return false // an open message broke: read everything again
			}
			m.file = *again
			if k := keyOf(m.name, again.v); k != m.key {
				return false
			}
		}
	}
	return true
}

// addOpen adds a new message file to the open ones in order; false when
// it sorts before a settled message.
func (f *follow) addOpen(name string, jf *jsonFile) bool {
	m := &openMessage{name: strings.TrimSuffix(name, ".json"), file: *jf, parts: map[string]*jsonFile{}}
	m.key = keyOf(m.name, jf.v)
	if f.settled && m.key.compare(f.last) < 0 {
		return false
	}
	i, _ := slices.BinarySearchFunc(f.open, m, func(a, b *openMessage) int {
		// Equal keys keep the file order parseTree's stable sort keeps.
		return cmp.Or(a.key.compare(b.key), cmp.Compare(a.name, b.name))
	})
	f.open = slices.Insert(f.open, i, m)
	return true
}

func keyOf(stem string, v transcript.Value) msgKey {
	m := newMessage(stem, v)
	return msgKey{m.created, m.id}
}

// readParts reads m's part files that are new or changed.
func (f *follow) readParts(m *openMessage) {
	names := sortedJSON(filepath.Join(f.storage, "part", m.key.id))
	keep := map[string]bool{}
	for _, p := range names {
		name := filepath.Base(p)
		keep[name] = true
		m.parts[name] = f.readFile(p, m.parts[name])
	}
	for name := range m.parts {
		if !keep[name] {
			delete(m.parts, name)
		}
	}
}

// readFile reads path as readJSON does, unless its size and mtime are
// those of prev, which it then returns.
func (f *follow) readFile(path string, prev *jsonFile) *jsonFile {
	fi, err := os.Stat(path)
	if err == nil && prev != nil && stampOf(fi) == prev.st {
		return prev
	}
	jf := &jsonFile{}
	if err == nil {
		jf.st = stampOf(fi)
	}
	data, err := transcript.ReadFile(path, int64(maxValue))
	f.read += int64(len(data))
	switch {
	case err != nil:
		jf.note = fmt.Sprintf("%s: skipped: %v", filepath.Base(path), err)
	case !transcript.ValidJSONString(string(data)) || !transcript.Parse(string(data)).IsObject():
		jf.note = fmt.Sprintf("%s: malformed JSON", filepath.Base(path))
	default:
		jf.v, jf.ok = transcript.Parse(string(data)), true
	}
	return jf
}

// settle builds every open message but the last openTail, streaming their
// items, and drops them.
func (f *follow) settle() {
	k := len(f.open) - openTail
	if k <= 0 {
		return
	}
	for i, m := range f.open[:k] {
		// Parts are read here, one message's at a time, so that a first
		// Feed of a long session never holds them all.
		f.readParts(m)
		f.build(f.b, m)
		f.settled, f.last = true, m.key
		f.open[i] = nil // built: its files' contents go
	}
	// A new array: the old one would keep every settled message's.
	f.open = slices.Clone(f.open[k:])
}

// build adds m with its parts, as parseTree does.
func (f *follow) build(b *builder, m *openMessage) {
	msg := newMessage(m.name, m.file.v)
	for _, name := range slices.Sorted(maps.Keys(m.parts)) {
		p := m.parts[name]
		if !p.ok {
			b.warnf("%s", p.note)
			continue
		}
		b.part(msg, strings.TrimSuffix(name, ".json"), p.v)
	}
	b.add(msg)
}

// Transcripts implements transcript.Follow: the settled messages' items
// were streamed (opts.Item); the open ones' are in Items.
func (f *follow) Transcripts() []*transcript.Transcript {
	if f.whole != nil {
		return []*transcript.Transcript{f.whole}
	}
	if f.id == "" {
		return nil
	}
	b := f.b.clone()
	for _, m := range f.open {
		f.build(b, m)
	}
	// What newBuilder takes from the session's info, as parseTree would
	// have had it from the start.
	si := sessionInfo(f.info)
	t := b.t
	t.ID, t.CWD, t.ParentID, t.StartedAt = si.id, si.directory, si.parentID, msTime(si.created)
	if t.Model == "" {
		t.Model = si.modelID
	}
	if si.title != "" && !placeholderTitle.MatchString(si.title) {
		t.Title = transcript.Headline(si.title)
	}
	if u := msTime(si.updated); u.After(b.last) {
		b.last = u
	}
	// Message files that did not parse were noted first, in name order.
	var notes []string
	for _, name := range slices.Sorted(maps.Keys(f.failed)) {
		notes = append(notes, f.failed[name].note)
	}
	t.Warnings = append(notes, t.Warnings...)
	t = b.finish()
	if t.CWD == "" {
		if pid := f.info.Get("projectID").Str(); pid != "" {
			p, ok := f.projects[pid]
			if !ok {
				data, err := transcript.ReadFileFollow(filepath.Join(f.storage, "project", pid+".json"), transcript.MaxConfigFile)
				switch {
				case err == nil:
					p.cwd = transcript.ParseBytes(data).Get("worktree").String()
				case !errors.Is(err, fs.ErrNotExist):
					p.note = fmt.Sprintf("project %s: skipped: %v", pid, err)
				}
				f.projects[pid] = p
			}
			t.CWD = p.cwd
			if p.note != "" {
				t.Warnings = append(t.Warnings, p.note)
			}
		}
	}
	return []*transcript.Transcript{t}
}

// clone is a copy of b that builds more messages without changing b; its
// items go to its transcript's Items, after b's own (when b keeps them).
func (b *builder) clone() *builder {
	c := *b
	t := *b.t
	t.Items = slices.Clone(t.Items)
	t.Warnings = slices.Clone(t.Warnings)
	t.Compactions = slices.Clone(t.Compactions)
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
