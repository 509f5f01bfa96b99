package unixsock

import (
	"net"

	"golang.org/x/sys/unix"
)

// PeerCred returns who is at the other end: the uid (LOCAL_PEERCRED) and
// the pid (LOCAL_PEERPID) of the process that connected.
func PeerCred(c *net.UnixConn) (Cred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Cred{PID: 0, UID: -1}, err
	}
	cred := Cred{PID: 0, UID: -1}
	var serr error
	err = raw.Control(func(fd uintptr) {
		var xc *unix.Xucred
		xc, serr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if serr != nil {
			return
		}
		cred.UID = int(xc.Uid)
		pid, perr := unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
		if perr == nil {
			cred.PID = pid
		}
	})
	if err != nil {
		return Cred{PID: 0, UID: -1}, err
	}
	return cred, serr
}
