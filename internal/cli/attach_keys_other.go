//go:build !linux

package cli

import (
	"os"

	"github.com/muesli/cancelreader"
)

// openKeys returns a cancelable reader of the terminal the attach client
// reads keys from.
func openKeys(in *os.File) (cancelreader.CancelReader, error) {
	return cancelreader.NewReader(in)
}
