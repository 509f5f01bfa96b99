//go:build !linux

package cli

import (
	"io"
	"os"

	"github.com/muesli/cancelreader"
)

// openKeys returns a cancelable reader of the terminal the attach client
// reads keys from.
func openKeys(in *os.File) (cancelreader.CancelReader, error) {
	return cancelreader.NewReader(in)
}

// terminalOut is where the attach client writes the pane.
func terminalOut(out io.Writer) (w io.Writer, done func()) { return out, func() {} }

// passTerminal gives the daemon no terminal here: the attach client
// relays the pane itself.
func passTerminal() *os.File { return nil }
