//go:build !linux

package pane

import "os"

// pollable keeps the PTY master blocking outside Linux: kqueue does not
// report PTY masters reliably on macOS (creack/pty reverted its
// non-blocking masters for that).
func pollable(f *os.File) (*os.File, bool, error) { return f, false, nil }
