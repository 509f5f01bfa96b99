package daemon

import (
	"io"
	"net"
	"sync"
	"syscall"
)

// passedReader reads a control connection and keeps the one descriptor a
// request may pass along (attach passes the user's terminal, SCM_RIGHTS).
// Any other descriptor is closed as it comes, so a client cannot make the
// daemon hold files; the kept one is closed with the connection unless a
// request took it.
type passedReader struct {
	conn *net.UnixConn
	oob  []byte
	mu   sync.Mutex
	fd   int // -1: none
}

func newPassedReader(conn *net.UnixConn) *passedReader {
	return &passedReader{conn: conn, oob: make([]byte, syscall.CmsgSpace(4*4)), fd: -1}
}

func (r *passedReader) Read(p []byte) (int, error) {
	n, oobn, _, _, err := r.conn.ReadMsgUnix(p, r.oob)
	if oobn > 0 {
		r.keep(r.oob[:oobn])
	}
	if n < 0 {
		n = 0 // after an error, such as a deadline
	}
	if n == 0 && err == nil && len(p) > 0 {
		// recvmsg says the end of a stream by reading nothing, which
		// ReadMsgUnix, made for datagrams too, passes on as it is.
		return 0, io.EOF
	}
	return n, err
}

func (r *passedReader) keep(oob []byte) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if r.fd < 0 {
				r.fd = fd
			} else {
				syscall.Close(fd)
			}
		}
	}
}

// take returns the passed descriptor, now the caller's to close, or -1.
func (r *passedReader) take() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	fd := r.fd
	r.fd = -1
	return fd
}

// close closes a passed descriptor nobody took.
func (r *passedReader) close() {
	if fd := r.take(); fd >= 0 {
		syscall.Close(fd)
	}
}
