package rawio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

func pair(t *testing.T) (a, b *net.UnixConn) {
	t.Helper()
	dir := t.TempDir()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: dir + "/s", Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, err = net.DialUnix("unix", nil, l.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	b, err = l.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func raw(t *testing.T, c Conn) Reader {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return Reader{rc}
}

// A write larger than the socket buffer waits in the poller for the
// reader and arrives whole, in order.
func TestWriteWaitsAndReadDrains(t *testing.T) {
	a, b := pair(t)
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	errc := make(chan error, 1)
	go func() {
		n, err := Writer{raw(t, a).RC}.Write(payload)
		if err == nil && n != len(payload) {
			err = io.ErrShortWrite
		}
		a.CloseWrite()
		errc <- err
	}()
	got, err := io.ReadAll(raw(t, b))
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, payload) {
		t.Fatalf("read %d bytes, want the %d written", len(got), len(payload))
	}
}

// TryWrite never waits: on a full socket it writes what fits, then 0.
func TestTryWriteNeverWaits(t *testing.T) {
	a, _ := pair(t)
	rc := raw(t, a).RC
	chunk := make([]byte, 64<<10)
	total := 0
	for i := 0; ; i++ {
		n := TryWrite(rc, chunk)
		total += n
		if n == 0 {
			break
		}
		if i > 10000 {
			t.Fatal("TryWrite never found the socket full")
		}
	}
	if total == 0 {
		t.Fatal("TryWrite wrote nothing to an empty socket")
	}
}

// A read deadline ends a waiting Read, as with the os and net Read.
func TestReadHonoursDeadline(t *testing.T) {
	_, b := pair(t)
	b.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := raw(t, b).Read(make([]byte, 10))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past the deadline: %v, want a deadline error", err)
	}
}

func TestReadEmptyBuffer(t *testing.T) {
	_, b := pair(t)
	if n, err := raw(t, b).Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil) = %d, %v", n, err)
	}
}

// TryRead never waits: it returns what is there, then 0 with no error
// while the socket is empty, then io.EOF once the writer has closed.
func TestTryReadNeverWaits(t *testing.T) {
	a, b := pair(t)
	rc := raw(t, b).RC
	buf := make([]byte, 64)
	if n, err := TryRead(rc, buf); n != 0 || err != nil {
		t.Fatalf("TryRead of an empty socket = %d, %v; want 0, nil", n, err)
	}
	if _, err := a.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	// The bytes are in b's buffer once the write returns: a unix socket
	// queues them on the receiver at once.
	if n, err := TryRead(rc, buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("TryRead = %q, %v; want \"hello\"", buf[:n], err)
	}
	if n, err := TryRead(rc, buf); n != 0 || err != nil {
		t.Fatalf("TryRead after draining = %d, %v; want 0, nil", n, err)
	}
	a.CloseWrite()
	if n, err := TryRead(rc, buf); n != 0 || err != io.EOF {
		t.Fatalf("TryRead after the writer closed = %d, %v; want 0, io.EOF", n, err)
	}
}

func TestReadable(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if Readable(r.Fd(), time.Millisecond) {
		t.Fatal("an empty pipe is readable")
	}
	w.Write([]byte{0x1b})
	if !Readable(r.Fd(), 0) {
		t.Fatal("a pipe with a byte in it is not readable")
	}
}
