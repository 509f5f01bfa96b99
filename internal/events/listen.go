package events

import (
	"net"

	"github.com/musterhq/muster/internal/unixsock"
)

// Listen creates events.sock at path for Serve (see unixsock.Listen).
func Listen(path string) (*net.UnixListener, error) { return unixsock.Listen(path) }
