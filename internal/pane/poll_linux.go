package pane

import (
	"os"

	"golang.org/x/sys/unix"
)

// pollable returns the PTY master as a descriptor of the runtime's poller:
// pty.StartWithSize leaves it blocking (its Setsize calls File.Fd), so the
// reader sat in a read system call on a thread of its own. Every echo then
// came back through exitsyscall, which wakes sysmon and, when the thread
// has lost its P, parks it until another thread hands one over; and while
// the reader sleeps in the call its P is not idle, so sysmon polls every
// 20 µs for 10 ms after each keystroke (a third of the daemon's CPU while
// typing, perf). Through the poller the reader is an ordinary parked
// goroutine, woken by the thread already waiting in epoll.
func pollable(f *os.File) (*os.File, bool, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, false, err
	}
	// The description is shared with f, which is closed below: nothing
	// else reads it in blocking mode.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, false, err
	}
	f.Close()
	return os.NewFile(uintptr(fd), "/dev/ptmx"), true, nil
}
