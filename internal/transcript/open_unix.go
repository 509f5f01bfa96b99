//go:build unix

package transcript

import (
	"os"
	"syscall"
)

// openNoFollow opens path read-only, refusing a symlink as the final
// component and never blocking on a FIFO swapped in after the checks.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// linkCount is the number of hard links to the file fi describes.
func linkCount(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}
