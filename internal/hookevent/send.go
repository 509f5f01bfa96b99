package hookevent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// ErrUnreachable means no daemon accepted the connection, even after the
// retry; the helper then stays silent.
var ErrUnreachable = errors.New("events socket unreachable")

// retryDelay separates the two connection attempts, long enough to bridge a
// daemon that is just replacing its socket.
const retryDelay = 50 * time.Millisecond

// conn is the one connection of an exchange.
type conn interface {
	io.ReadWriteCloser
	SetDeadline(time.Time) error
}

// dial connects to the events socket; tests replace it to inject failures.
var dial = dialUnix

// dialUnix connects a Unix stream socket without package net, whose
// initialization (and that of its vendored dependencies) every hook would
// pay for; bench/hook.sh measures the difference. The non-blocking socket
// goes to the runtime poller through os.NewFile, which gives it deadlines. A full accept backlog
// (EAGAIN) counts as a connect error, like a refused connection.
func dialUnix(socket string, timeout time.Duration) (conn, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: socket})
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "connect", Path: socket, Err: err}
	}
	f := os.NewFile(uintptr(fd), socket)
	if err := f.SetDeadline(time.Now().Add(timeout)); err != nil {
		f.Close()
		return nil, fmt.Errorf("connect %s: %w", socket, err)
	}
	return f, nil
}

// Send delivers one envelope to the events socket: one connection, the JSON
// envelope and a newline, then one JSON line back. A connect error is
// retried once with the same envelope (hence the same event id, so the
// daemon cannot record it twice); the whole exchange of each attempt is
// bounded by timeout.
func Send(socket string, env proto.Envelope, timeout time.Duration) (proto.EventResponse, error) {
	body, err := proto.EncodeEnvelope(env)
	if err != nil {
		return proto.EventResponse{}, err
	}
	c, err := dial(socket, timeout)
	if err != nil {
		time.Sleep(retryDelay)
		c, err = dial(socket, timeout)
		if err != nil {
			return proto.EventResponse{}, fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return proto.EventResponse{}, fmt.Errorf("send event: %w", err)
	}
	if _, err := c.Write(body); err != nil {
		return proto.EventResponse{}, fmt.Errorf("send event: %w", err)
	}
	line, err := readLine(c)
	if err != nil {
		return proto.EventResponse{}, fmt.Errorf("read event response: %w", err)
	}
	return proto.DecodeEventResponse(line)
}

// readLine reads up to the first newline (or the peer's close).
func readLine(c conn) ([]byte, error) {
	buf := make([]byte, 0, 256)
	var chunk [256]byte
	for len(buf) <= proto.MaxEventResponse {
		n, err := c.Read(chunk[:])
		buf = append(buf, chunk[:n]...)
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			return buf[:i], nil
		}
		if err != nil {
			if len(buf) > 0 && errors.Is(err, io.EOF) {
				return buf, nil
			}
			return nil, err
		}
	}
	return nil, fmt.Errorf("response longer than %d bytes", proto.MaxEventResponse)
}
