//go:build unix

package transcript

import (
	"errors"
	"os"
	"syscall"
)

// openNonBlocking opens path read-only with O_NONBLOCK, so the open of a
// FIFO with no writer returns at once, and with O_NOFOLLOW unless follow.
func openNonBlocking(path string, follow bool) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	return os.OpenFile(path, flags, 0)
}

// isSymlinkRefusal reports the error O_NOFOLLOW gives for a symlink as the
// last component (ELOOP on Linux, EMLINK or EFTYPE elsewhere), which a
// symlink loop gives too.
func isSymlinkRefusal(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}

// linkCount is the number of hard links to the file fi describes.
func linkCount(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}
