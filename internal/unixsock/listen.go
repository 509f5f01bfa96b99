// Package unixsock owns the user-only Unix sockets of the daemon
// (control.sock and events.sock): creating them safely and learning who is
// on the other end of a connection.
package unixsock

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Listen creates a user-only socket at path. The directory must exist,
// belong to this user and be closed to others (mode 0700, as
// paths.Dirs.EnsureRuntime makes it). A stale socket left by a dead daemon
// is removed; a socket another daemon still answers on is an error. The
// socket is made mode 0600 before Listen returns (chmod rather than umask,
// which is process-wide; the 0700 directory covers the moment between).
func Listen(path string) (*net.UnixListener, error) {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("listen on %s: directory %s is open to other users (mode %o)", path, dir, st.Mode().Perm())
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("listen on %s: a non-socket file is in the way", path)
		}
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("listen on %s: another daemon is listening", path)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ENOENT) {
			return nil, fmt.Errorf("listen on %s: check stale socket: %w", path, err)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("listen on %s: remove stale socket: %w", path, err)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(true)
	return ln, nil
}
