package unixsock

import "net"

// Cred identifies the process at the other end of a connection.
type Cred struct {
	PID int // 0 when unknown
	UID int // -1 when unknown
}

// PeerUID returns the uid of the process at the other end.
func PeerUID(c *net.UnixConn) (int, error) {
	cred, err := PeerCred(c)
	return cred.UID, err
}
