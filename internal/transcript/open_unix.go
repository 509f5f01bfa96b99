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
