package opencode

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/musterhq/muster/internal/provider/opencode/opencodehook"
	"github.com/musterhq/muster/internal/transcript"
)

// Name is the provider's stable name.
const Name = opencodehook.Name

// Source is the OpenCode provider.
type Source struct{}

// New returns the OpenCode provider.
func New() transcript.Source { return &Source{} }

// Provider returns "opencode".
func (*Source) Provider() string { return Name }

// Dir is OpenCode's data directory: $XDG_DATA_HOME/opencode, else
// ~/.local/share/opencode; "" when neither is known.
func Dir(env transcript.Env) string {
	return env.Dir("XDG_DATA_HOME", "opencode", ".local", "share", "opencode")
}

// Roots returns the data directory (the database and its WAL) and the
// legacy session tree.
func (*Source) Roots(env transcript.Env) []string {
	d := Dir(env)
	if d == "" {
		return nil
	}
	return []string{d, filepath.Join(d, "storage", "session")}
}

// Discover lists the databases (opencode*.db) and the legacy session files.
// A database's size and mtime cover its -wal file too.
func (*Source) Discover(ctx context.Context, env transcript.Env) ([]transcript.File, error) {
	d := Dir(env)
	if d == "" {
		return nil, nil
	}
	var files []transcript.File
	if entries, err := os.ReadDir(d); err == nil {
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasPrefix(name, "opencode") || filepath.Ext(name) != ".db" {
				continue
			}
			f, ok := transcript.Candidate(filepath.Join(d, name), e)
			if !ok {
				continue
			}
			if wal, err := os.Stat(f.Path + "-wal"); err == nil {
				f.Size += wal.Size()
				if wal.ModTime().After(f.ModTime) {
					f.ModTime = wal.ModTime()
				}
			}
			files = append(files, f)
		}
	}
	storage := filepath.Join(d, "storage")
	projects, err := os.ReadDir(filepath.Join(storage, "session"))
	if err != nil {
		return files, nil
	}
	for _, p := range projects {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !p.IsDir() {
			continue
		}
		dir := filepath.Join(storage, "session", p.Name())
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() || filepath.Ext(e.Name()) != ".json" {
				continue
			}
			f, ok := transcript.Candidate(filepath.Join(dir, e.Name()), e)
			if !ok {
				continue
			}
			id := strings.TrimSuffix(e.Name(), ".json")
			if md, err := os.Stat(filepath.Join(storage, "message", id)); err == nil && md.ModTime().After(f.ModTime) {
				f.ModTime = md.ModTime()
			}
			files = append(files, f)
		}
	}
	return files, nil
}

var sqliteMagic = []byte("SQLite format 3\x00")

// Parse reads a database (one transcript per session), a legacy session
// file, or an `opencode export` document.
func (*Source) Parse(ctx context.Context, env transcript.Env, path string, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := transcript.OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("read opencode data: %w", err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, head)
	if err != nil && n == 0 && err != io.EOF {
		return nil, fmt.Errorf("read opencode data: %w", err)
	}
	if bytes.Equal(head[:n], sqliteMagic) {
		f.Close()
		return parseDB(ctx, path, opts)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read opencode data: %w", err)
	}
	return []*transcript.Transcript{parseJSON(f, path, opts)}, nil
}

// sortedJSON lists the .json files of dir by name (OpenCode ids sort in
// creation order).
func sortedJSON(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && filepath.Ext(e.Name()) == ".json" {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out
}
