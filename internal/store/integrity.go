package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"modernc.org/sqlite"
)

// CorruptError is a database file SQLite cannot use as it is.
type CorruptError struct {
	Path string
	Why  string
}

func (e *CorruptError) Error() string { return fmt.Sprintf("%s is corrupt: %s", e.Path, e.Why) }

// sqliteHeader starts every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// checkFile looks at the database file before SQLite opens it: a FIFO
// or a device would block or mislead the open (an error, nothing is
// moved), and an empty, truncated or foreign file would be taken for a
// new database or fail later (*CorruptError). A missing file is fine.
func checkFile(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file but %s; move it away", path, fileKind(fi.Mode()))
	}
	if fi.Size() == 0 {
		return &CorruptError{Path: path, Why: "it is empty (zero length)"}
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var h [100]byte
	n, err := io.ReadFull(f, h[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	if n < len(h) {
		return &CorruptError{Path: path, Why: fmt.Sprintf("it is truncated (%d bytes, shorter than a database header)", n)}
	}
	if string(h[:16]) != sqliteHeader {
		return &CorruptError{Path: path, Why: "it is not a SQLite database (its header is wrong)"}
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	changes, validFor := binary.BigEndian.Uint32(h[24:28]), binary.BigEndian.Uint32(h[92:96])
	// A checkpoint cut short leaves the file short of its header's count
	// with the WAL that completes it; only without a WAL is it truncated.
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		return nil
	}
	if changes == validFor && pages > 0 && fi.Size() < pages*pageSize {
		return &CorruptError{Path: path, Why: fmt.Sprintf("it is truncated (%d bytes of the %d its header counts)", fi.Size(), pages*pageSize)}
	}
	return nil
}

// isCorrupt reports whether SQLite found the database malformed.
func isCorrupt(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case 11, 26: // SQLITE_CORRUPT, SQLITE_NOTADB
		return true
	}
	return false
}

// probe reads what is read first (every page of the main database's
// session tables, of the index's file table), so that a database corrupt
// there is found at open rather than when the first command needs it. It
// is cheap: these tables hold one row per session or file.
func (s *Store) probe(ctx context.Context) error {
	for _, q := range s.schema.probes {
		var n int
		if err := s.R.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return err
		}
	}
	return nil
}

// moveAside renames the database and its -wal and -shm files to
// PATH.corrupt-TIME*, keeping them for a look or a recovery, and returns
// the new name of the database.
func moveAside(path string, now time.Time) (string, error) {
	backup := path + ".corrupt-" + now.UTC().Format("20060102T150405Z")
	if err := os.Rename(path, backup); err != nil {
		return "", fmt.Errorf("move %s aside: %w", path, err)
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Rename(path+suffix, backup+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return backup, fmt.Errorf("move %s aside: %w", path+suffix, err)
		}
	}
	return backup, nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "a " + m.Type().String()
}
