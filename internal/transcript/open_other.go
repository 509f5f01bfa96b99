//go:build !unix

package transcript

import (
	"io/fs"
	"os"
)

// openNonBlocking checks the last component with Lstat where O_NOFOLLOW is
// missing; there are no FIFOs to block on.
func openNonBlocking(path string, follow bool) (*os.File, error) {
	if !follow {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &fs.PathError{Op: "open", Path: path, Err: ErrSymlink}
		}
	}
	return os.Open(path)
}

// isSymlinkRefusal is false: openNonBlocking's error says it already.
func isSymlinkRefusal(error) bool { return false }

// linkCount is unknown here, so no image is embedded.
func linkCount(os.FileInfo) (uint64, bool) { return 0, false }
