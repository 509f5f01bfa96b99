package cursor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/provider/cursor/cursorhook"
	"github.com/musterhq/muster/internal/transcript"
)

// Name is the provider's stable name.
const Name = cursorhook.Name

// Source is the Cursor CLI provider.
type Source struct{}

// New returns the Cursor CLI provider.
func New() transcript.Source { return &Source{} }

// Provider returns "cursor".
func (*Source) Provider() string { return Name }

// Dir is ~/.cursor; "" without a home directory.
func Dir(env transcript.Env) string {
	d, _ := dir(env)
	return d
}

// dir is Dir, with an error when it is not absolute.
func dir(env transcript.Env) (string, error) { return env.CheckedDir("", "", ".cursor") }

// Roots returns the transcript and chat-store trees.
func (*Source) Roots(env transcript.Env) []string {
	d := Dir(env)
	if d == "" {
		return nil
	}
	return []string{filepath.Join(d, "projects"), filepath.Join(d, "chats")}
}

// Discover lists agent transcripts (.jsonl, .txt; flat and nested), and the
// store.db of chats that have no transcript. A transcript's mtime includes
// its chat store's, whose meta carries the title.
func (*Source) Discover(ctx context.Context, env transcript.Env) ([]transcript.File, error) {
	d := Dir(env)
	if d == "" {
		return nil, nil
	}
	stores := findStores(d)
	var files []transcript.File
	projects, _ := os.ReadDir(filepath.Join(d, "projects"))
	for _, p := range projects {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !p.IsDir() {
			continue
		}
		dir := filepath.Join(d, "projects", p.Name(), "agent-transcripts")
		files = appendTranscripts(files, dir, stores, 0)
	}
	for _, store := range stores {
		if store.seen {
			continue
		}
		if f, ok := statDB(store.path); ok {
			files = append(files, f)
		}
	}
	return files, nil
}

type storeRef struct {
	path string
	seen bool
}

// findStores maps chat ids to their chats/<md5>/<id>/store.db.
func findStores(cursorDir string) map[string]*storeRef {
	out := map[string]*storeRef{}
	hashes, _ := os.ReadDir(filepath.Join(cursorDir, "chats"))
	for _, h := range hashes {
		if !h.IsDir() {
			continue
		}
		chats, _ := os.ReadDir(filepath.Join(cursorDir, "chats", h.Name()))
		for _, c := range chats {
			p := filepath.Join(cursorDir, "chats", h.Name(), c.Name(), "store.db")
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				out[c.Name()] = &storeRef{path: p}
			}
		}
	}
	return out
}

// findChat finds chats/<md5(cwd)>/<id>: the md5 names the cwd even when
// the directory holds no store.db.
func findChat(cursorDir, id string) (hash, store string) {
	hashes, _ := os.ReadDir(filepath.Join(cursorDir, "chats"))
	for _, h := range hashes {
		dir := filepath.Join(cursorDir, "chats", h.Name(), id)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		hash = h.Name()
		p := filepath.Join(dir, "store.db")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return hash, p
		}
	}
	return hash, ""
}

// statDB stats a database with its WAL: committed writes land in the WAL.
func statDB(path string) (transcript.File, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return transcript.File{}, false
	}
	f := transcript.StatFile(path, fi)
	if wal, err := os.Stat(path + "-wal"); err == nil {
		f.Size += wal.Size()
		if wal.ModTime().After(f.ModTime) {
			f.ModTime = wal.ModTime()
		}
	}
	return f, true
}

func appendTranscripts(files []transcript.File, dir string, stores map[string]*storeRef, depth int) []transcript.File {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return files
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			if depth == 0 {
				files = appendTranscripts(files, filepath.Join(dir, name), stores, depth+1)
			}
			continue
		}
		ext := filepath.Ext(name)
		if ext != ".jsonl" && ext != ".txt" {
			continue
		}
		f, ok := transcript.Candidate(filepath.Join(dir, name), e)
		if !ok {
			continue
		}
		if s := stores[strings.TrimSuffix(name, ext)]; s != nil {
			s.seen = true
			if sf, ok := statDB(s.path); ok && sf.ModTime.After(f.ModTime) {
				f.ModTime = sf.ModTime
			}
		}
		files = append(files, f)
	}
	return files
}

var sqliteMagic = []byte("SQLite format 3\x00")

// Parse reads a JSONL or .txt transcript (with its chat store's meta), or a
// store.db on its own.
func (*Source) Parse(ctx context.Context, env transcript.Env, path string, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := transcript.OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cursor transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read cursor transcript: %w", err)
	}
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, head)
	if err != nil && n == 0 && err != io.EOF {
		return nil, fmt.Errorf("read cursor transcript: %w", err)
	}
	if bytes.Equal(head[:n], sqliteMagic) {
		f.Close()
		t, err := parseStore(ctx, path, opts)
		if err != nil {
			return nil, err
		}
		return []*transcript.Transcript{t}, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read cursor transcript: %w", err)
	}
	id := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	b := newBuilder(path, id, opts)
	if filepath.Ext(path) == ".txt" {
		parseText(b, f)
	} else {
		parseJSONL(b, f)
	}
	return []*transcript.Transcript{b.fileInto(ctx, b.t, fi.ModTime(), id)}, nil
}

// fileInto completes t, a transcript file's parse, with what lies beside
// the file: its chat store's meta and its project's directory.
func (b *builder) fileInto(ctx context.Context, t *transcript.Transcript, mtime time.Time, id string) *transcript.Transcript {
	t.EndedAt = mtime.UTC()
	cursorDir, project := layout(t.Path)
	var hashDir string
	if cursorDir != "" {
		var store string
		hashDir, store = findChat(cursorDir, id)
		if store != "" {
			if m, err := readMeta(ctx, store); err == nil {
				metaInto(t, m)
			} else {
				t.Warnings = append(t.Warnings, fmt.Sprintf("chat store: %v", err))
			}
		}
	}
	if project != "" {
		t.CWD = resolveProject(project, hashDir)
	}
	return b.finishInto(t)
}

// Follow implements transcript.Follower for JSONL transcripts, which
// Cursor only appends to; a .txt transcript's blocks may grow in place,
// so it is not followed (nil).
func (*Source) Follow(env transcript.Env, path string, opts transcript.ParseOptions) transcript.Follow {
	if filepath.Ext(path) != ".jsonl" {
		return nil
	}
	id := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	b := newBuilder(path, id, opts)
	return &transcript.LineFollow{
		What: "cursor transcript",
		Line: b.jsonlLine,
		Skipped: func(n int) {
			b.warnf("line %d: over %d bytes; skipped", n, transcript.DefaultMaxLine)
		},
		Snapshot: func() []*transcript.Transcript {
			c := *b.t
			c.Items = slices.Clone(b.t.Items)
			c.Warnings = slices.Clone(b.t.Warnings)
			var mtime time.Time
			if fi, err := os.Stat(c.Path); err == nil {
				mtime = fi.ModTime()
			}
			// The store is read on each step: it is a small SQLite table,
			// and Cursor renames the chat in it as the conversation goes.
			return []*transcript.Transcript{b.fileInto(context.Background(), &c, mtime, id)}
		},
	}
}

// layout splits <cursor>/projects/<project>/agent-transcripts/[<id>/]<file>.
func layout(path string) (cursorDir, project string) {
	dir := filepath.Dir(path)
	for range 2 {
		if filepath.Base(dir) == "agent-transcripts" {
			projDir := filepath.Dir(dir)
			if filepath.Base(filepath.Dir(projDir)) == "projects" {
				return filepath.Dir(filepath.Dir(projDir)), filepath.Base(projDir)
			}
			return "", ""
		}
		dir = filepath.Dir(dir)
	}
	return "", ""
}
