package cli

import (
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/muesli/cancelreader"
	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/rawio"
)

// openKeys opens the terminal the attach client reads keys from. On Linux
// it opens the terminal anew, as a descriptor of its own that the runtime
// poller waits on: cancelreader waits in a blocking epoll_wait, and every
// key then came back through exitsyscall, which wakes sysmon to poll every
// 20 µs (a quarter of the client's CPU per keystroke, perf). A description
// of its own keeps O_NONBLOCK off the one the user's shell shares.
func openKeys(in *os.File) (cancelreader.CancelReader, error) {
	f, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(in.Fd())), os.O_RDONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return cancelreader.NewReader(in)
	}
	// A descriptor the poller does not take has no deadlines, and
	// cancelling needs one.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close()
		return cancelreader.NewReader(in)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return cancelreader.NewReader(in)
	}
	return &polledKeys{f: f, read: rawio.Reader{RC: rc}.Read}, nil
}

// polledKeys is a terminal read through the runtime poller; Cancel ends a
// read in progress with an expired deadline.
type polledKeys struct {
	f        *os.File
	read     func([]byte) (int, error)
	canceled atomic.Bool
}

func (k *polledKeys) Read(p []byte) (int, error) {
	n, err := k.read(p)
	if err != nil && k.canceled.Load() {
		return n, cancelreader.ErrCanceled
	}
	return n, err
}

func (k *polledKeys) Cancel() bool {
	k.canceled.Store(true)
	return k.f.SetReadDeadline(time.Now()) == nil
}

func (k *polledKeys) Close() error { return k.f.Close() }

// terminalOut is where the attach client writes the pane: for the
// process's own stdout, the terminal opened anew as a descriptor of the
// poller and written with raw system calls (rawio), which wake no sysmon;
// a description of its own keeps O_NONBLOCK off the one the shell shares.
// done closes what it opened.
func terminalOut(out io.Writer) (w io.Writer, done func()) {
	if out != io.Writer(os.Stdout) {
		return out, func() {}
	}
	f, err := os.OpenFile("/proc/self/fd/1", os.O_WRONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return out, func() {}
	}
	rc, err := f.SyscallConn()
	if err != nil || f.SetWriteDeadline(time.Time{}) != nil {
		f.Close()
		return out, func() {}
	}
	return rawio.Writer{RC: rc}, func() { f.Close() }
}

// passTerminal opens the user's terminal anew, for the daemon to write the
// pane to and read keys from (AttachArgs.Terminal), or returns nil when
// stdin and stdout are not one terminal or MUSTER_ATTACH_DIRECT=0. A
// description of its own, opened blocking and never polled here, keeps
// the O_NONBLOCK the daemon sets off the one the user's shell shares.
func passTerminal() *os.File {
	if os.Getenv("MUSTER_ATTACH_DIRECT") == "0" {
		return nil
	}
	var in, out unix.Stat_t
	if unix.Fstat(int(os.Stdin.Fd()), &in) != nil || unix.Fstat(int(os.Stdout.Fd()), &out) != nil ||
		in.Rdev != out.Rdev || in.Mode&unix.S_IFMT != unix.S_IFCHR {
		return nil
	}
	fd, err := unix.Open("/proc/self/fd/1", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Rdev != out.Rdev {
		unix.Close(fd)
		return nil
	}
	return os.NewFile(uintptr(fd), "terminal")
}
