// Package rawio owns reads and writes of non-blocking descriptors of the
// runtime poller made with raw system calls. The os and net packages make
// them through syscall.Syscall, whose entersyscall wakes sysmon whenever it
// sleeps; sysmon then polls every 20 µs until the process idles again. On
// a keystroke echo that was a quarter of the attach client's and the
// daemon's context switches (perf, issue 11). A read or write of a
// non-blocking descriptor returns at once, so it needs no syscall state:
// waiting is left to the poller, which parks the goroutine on EAGAIN and
// honours deadlines and Close as before.
package rawio

import (
	"io"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Conn is an *os.File or net.Conn of the poller.
type Conn interface {
	SyscallConn() (syscall.RawConn, error)
}

func sys(trap uintptr, fd uintptr, p []byte) (int, syscall.Errno) {
	for {
		n, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
		if e != syscall.EINTR {
			return int(n), e
		}
	}
}

// Read reads once, waiting in the poller while nothing is there; it
// returns io.EOF at the end of the stream.
func Read(rc syscall.RawConn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := rc.Read(func(fd uintptr) bool {
		n, errno = sys(syscall.SYS_READ, fd, p)
		return errno != syscall.EAGAIN
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p, waiting in the poller while the descriptor is
// full.
func Write(rc syscall.RawConn, p []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	err := rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			n, e := sys(syscall.SYS_WRITE, fd, p[done:])
			if e == syscall.EAGAIN {
				return false
			}
			if e != 0 {
				errno = e
				return true
			}
			done += n
		}
		return true
	})
	if err == nil && errno != 0 {
		err = errno
	}
	return done, err
}

// TryWrite makes one write that never waits and returns how much of p it
// wrote: 0 when the descriptor is full or failed.
func TryWrite(rc syscall.RawConn, p []byte) int {
	n := 0
	rc.Write(func(fd uintptr) bool {
		if m, e := sys(syscall.SYS_WRITE, fd, p); e == 0 {
			n = m
		}
		return true
	})
	return n
}

// TryRead makes one read that never waits: 0 and no error when nothing is
// there yet, io.EOF at the end of the stream.
func TryRead(rc syscall.RawConn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	if err := rc.Read(func(fd uintptr) bool {
		n, errno = sys(syscall.SYS_READ, fd, p)
		return true
	}); err != nil {
		return 0, err
	}
	switch {
	case errno == syscall.EAGAIN:
		return 0, nil
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Reader reads a descriptor with Read.
type Reader struct{ RC syscall.RawConn }

func (r Reader) Read(p []byte) (int, error) { return Read(r.RC, p) }

// Writer writes a descriptor with Write.
type Writer struct{ RC syscall.RawConn }

func (w Writer) Write(p []byte) (int, error) { return Write(w.RC, p) }

// Readable waits at most d for fd to have something to read and reports
// whether it has. It blocks its thread, so d must be short: it is for the
// few milliseconds a key reader gives the rest of a split sequence.
func Readable(fd uintptr, d time.Duration) bool {
	ms := int((d + time.Millisecond - 1) / time.Millisecond)
	deadline := time.Now().Add(d)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			if ms = int(time.Until(deadline) / time.Millisecond); ms < 0 {
				ms = 0
			}
			continue
		}
		return err == nil && n > 0
	}
}
