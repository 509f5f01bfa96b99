// Package blob stores published content (replays) as immutable blobs named
// by the first 16 hex digits of their SHA-256. The same content always gets
// the same id, and a stored blob never changes: it is written once to a
// temporary file and linked into place, an existing id is never overwritten,
// and every read checks the content against its id. The HTTP side lives in
// internal/web.
package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// IDLen is the length of a blob id in hex digits.
const IDLen = 16

// MaxSize bounds one blob; larger content is refused rather than stored.
const MaxSize = 256 << 20

var (
	// ErrNotFound means no blob has that id: show the user a 404.
	ErrNotFound = errors.New("blob not found")
	// ErrCorrupt means the stored file no longer matches its id; it is
	// never served and never silently replaced.
	ErrCorrupt = errors.New("stored blob does not match its id")
	// ErrCollision means different content already owns the id.
	ErrCollision = errors.New("another blob already has this id")
)

// Sum returns the full SHA-256 of content in hex.
func Sum(content []byte) string {
	s := sha256.Sum256(content)
	return hex.EncodeToString(s[:])
}

// ID returns the id content is stored under.
func ID(content []byte) string { return Sum(content)[:IDLen] }

// ParseID checks that s is a blob id: exactly 16 lower-case hex digits.
func ParseID(s string) (string, error) {
	if len(s) != IDLen {
		return "", fmt.Errorf("blob id %q: want %d lower-case hex digits", clip(s), IDLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", fmt.Errorf("blob id %q: want %d lower-case hex digits", clip(s), IDLen)
		}
	}
	return s, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Store is a directory of blobs, one file per id.
type Store struct {
	dir string
}

// New returns the store in dir (paths.Dirs.Blobs()); the directory is made
// on the first Put.
func New(dir string) *Store { return &Store{dir: dir} }

// Dir is the directory the store keeps its files in.
func (s *Store) Dir() string { return s.dir }

func (s *Store) path(id string) string { return filepath.Join(s.dir, id) }

// Put stores content and returns its id. Storing the same content again
// returns the same id and writes nothing.
func (s *Store) Put(content []byte) (string, error) {
	if len(content) > MaxSize {
		return "", fmt.Errorf("store blob: %d bytes is over the %d-byte limit", len(content), MaxSize)
	}
	sum := Sum(content)
	id := sum[:IDLen]
	if err := s.checkExisting(id, sum); err == nil {
		return id, nil
	} else if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return "", fmt.Errorf("store blob: %w", err)
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-"+id+"-*")
	if err != nil {
		return "", fmt.Errorf("store blob: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // after a link the name is just a second link
	_, werr := tmp.Write(content)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return "", fmt.Errorf("store blob: %w", err)
	}
	if err := os.Chmod(tmpName, 0o444); err != nil {
		return "", fmt.Errorf("store blob: %w", err)
	}
	// A hard link fails when the id exists, so a racing writer can never
	// replace a stored blob (a rename would).
	if err := os.Link(tmpName, s.path(id)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			if err := s.checkExisting(id, sum); err != nil {
				return "", err
			}
			return id, nil
		}
		return "", fmt.Errorf("store blob: %w", err)
	}
	syncDir(s.dir)
	return id, nil
}

// checkExisting returns nil when id is stored with exactly sum, ErrNotFound
// when it is absent, and ErrCollision or ErrCorrupt otherwise.
func (s *Store) checkExisting(id, sum string) error {
	got, err := s.Get(id)
	if err != nil {
		return err
	}
	if got.SHA256 != sum {
		return fmt.Errorf("store blob %s: %w", id, ErrCollision)
	}
	return nil
}

// Blob is a verified stored blob.
type Blob struct {
	ID      string
	SHA256  string // full digest, for strong ETags
	Content []byte
}

// Get reads and verifies a blob.
func (s *Store) Get(id string) (Blob, error) {
	if _, err := ParseID(id); err != nil {
		return Blob{}, err
	}
	f, err := os.Open(s.path(id))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Blob{}, ErrNotFound
		}
		return Blob{}, fmt.Errorf("read blob %s: %w", id, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Blob{}, fmt.Errorf("read blob %s: %w", id, err)
	}
	if !st.Mode().IsRegular() || st.Size() > MaxSize {
		return Blob{}, fmt.Errorf("read blob %s: %w", id, ErrCorrupt)
	}
	content := make([]byte, st.Size())
	if _, err := readFull(f, content); err != nil {
		return Blob{}, fmt.Errorf("read blob %s: %w", id, err)
	}
	sum := Sum(content)
	if sum[:IDLen] != id {
		return Blob{}, fmt.Errorf("read blob %s: %w", id, ErrCorrupt)
	}
	return Blob{ID: id, SHA256: sum, Content: content}, nil
}

func readFull(f *os.File, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	// The file must not have grown since Stat.
	var one [1]byte
	if m, _ := f.Read(one[:]); m != 0 {
		return n, ErrCorrupt
	}
	return n, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
