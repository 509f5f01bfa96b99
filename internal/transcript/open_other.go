//go:build !unix

package transcript

import (
	"errors"
	"os"
)

// openNoFollow is unavailable where O_NOFOLLOW is not: images are never
// embedded there.
func openNoFollow(string) (*os.File, error) {
	return nil, errors.New("embedding images needs O_NOFOLLOW, which this platform lacks")
}

// linkCount is unknown here; openNoFollow refuses every image anyway.
func linkCount(os.FileInfo) (uint64, bool) { return 0, false }
