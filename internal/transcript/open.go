package transcript

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is the error, wrapped, of OpenFile and ReadFile for a path
// that names something other than a regular file (a FIFO, a socket, a
// device, a directory).
var ErrNotRegular = errors.New("not a regular file")

// ErrSymlink is the error, wrapped, of OpenFile and ReadFile for a path
// whose last component is a symbolic link.
var ErrSymlink = errors.New("a symbolic link, not followed")

// OpenFile opens a file Muster reads from an agent's directories (a
// transcript, an index, a config file) without ever waiting on it: the
// open is non-blocking, so a FIFO or a device someone left there cannot
// stall the daemon, and the descriptor is checked with fstat to be a
// regular file before anything reads it. A symlink as the last component is
// refused (ErrSymlink): discovery lists only
// regular files, so a link found at a path it listed was swapped in since.
// A symlink loop anywhere on the path fails at once (ELOOP).
func OpenFile(path string) (*os.File, error) {
	return openRegular(path, false)
}

// OpenFileFollow is OpenFile for config files a user may keep as a symlink
// (a dotfiles checkout): a symlink as the last component is followed, with
// the same non-blocking open and regular-file check.
func OpenFileFollow(path string) (*os.File, error) {
	return openRegular(path, true)
}

func openRegular(path string, follow bool) (*os.File, error) {
	f, err := openNonBlocking(path, follow)
	if err != nil {
		if !follow && isSymlinkRefusal(err) {
			if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, fmt.Errorf("open %s: %w", path, ErrSymlink)
			}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open %s: %w (%s)", path, ErrNotRegular, fileKind(fi.Mode()))
	}
	return f, nil
}

// fileKind names what a non-regular file is, for the note that skips it.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}

// ReadFile reads a whole file opened with OpenFile, refusing one larger
// than max bytes (before reading it, and again if it grew meanwhile): for
// small config and index files only; transcripts are read as streams.
func ReadFile(path string, max int64) ([]byte, error) {
	return readRegular(path, max, false)
}

// ReadFileFollow is ReadFile with OpenFileFollow.
func ReadFileFollow(path string, max int64) ([]byte, error) {
	return readRegular(path, max, true)
}

func readRegular(path string, max int64, follow bool) ([]byte, error) {
	f, err := openRegular(path, follow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("read %s: %d bytes, over the %d-byte limit", path, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("read %s: over the %d-byte limit", path, max)
	}
	return data, nil
}

// MaxConfigFile bounds the config and index files providers read whole
// (projects.json, .project_root, session metadata): real ones are a few
// KiB.
const MaxConfigFile = 16 << 20

// Candidate is what discovery makes of a directory entry whose name says it
// is a transcript: a regular file is listed to be parsed, and so is a
// symlink, FIFO, socket or device by that name, so that Parse refuses it
// (OpenFile) with a note the history shows instead of it vanishing without
// a word. A directory, or an entry gone since it was listed, is not a
// candidate. Nothing is opened, so nothing can block.
func Candidate(path string, e fs.DirEntry) (File, bool) {
	fi, err := e.Info()
	if err != nil || fi.IsDir() {
		return File{}, false
	}
	return StatFile(path, fi), true
}

// CandidateAt is Candidate for a path discovery names without listing its
// directory.
func CandidateAt(path string) (File, bool) {
	fi, err := os.Lstat(path)
	if err != nil || fi.IsDir() {
		return File{}, false
	}
	return StatFile(path, fi), true
}
