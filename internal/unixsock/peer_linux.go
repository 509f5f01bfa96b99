package unixsock

import (
	"net"

	"golang.org/x/sys/unix"
)

// PeerCred returns who is at the other end (SO_PEERCRED): the uid and the
// pid of the process that connected, as the kernel recorded them at
// connect time. PID is 0 when the peer lives in a pid namespace this
// process cannot see.
func PeerCred(c *net.UnixConn) (Cred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Cred{PID: 0, UID: -1}, err
	}
	cred := Cred{PID: 0, UID: -1}
	var serr error
	err = raw.Control(func(fd uintptr) {
		var uc *unix.Ucred
		uc, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if serr == nil {
			cred = Cred{PID: int(uc.Pid), UID: int(uc.Uid)}
		}
	})
	if err != nil {
		return Cred{PID: 0, UID: -1}, err
	}
	return cred, serr
}
