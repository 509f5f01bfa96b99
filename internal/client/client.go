// Package client dials the daemon's control socket, starting the daemon on
// demand, exchanges versions with it, and speaks the proto control API.
package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
)

// ErrDaemonNotRunning means no daemon answers on the control socket; callers
// that may start one should use Ensure instead of Dial.
var ErrDaemonNotRunning = errors.New("the muster daemon is not running")

// Client is one connection to control.sock. It is not safe for concurrent use.
type Client struct {
	conn net.Conn
	r    *bufio.Reader
	// hello is set once the versions matched; before, only the frozen ops
	// may be called.
	hello bool
	// broken is why the connection cannot carry another call: a call was
	// cancelled with its response still on the way.
	broken error
	// passing is the file the request being sent passes (CallPassing).
	passing *os.File
}

// Dial connects to a running daemon and exchanges versions with it;
// version is this binary's, for the daemon's log and the mismatch message.
// A daemon of another control protocol gives a *proto.Error with
// proto.CodeVersion, saying to run `muster daemon stop`.
func Dial(ctx context.Context, dirs paths.Dirs, version string) (*Client, error) {
	c, err := connect(ctx, dirs)
	if err != nil {
		return nil, err
	}
	if err := c.exchangeVersions(ctx, version); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// DialFrozen connects to a running daemon without the version exchange.
// Only the frozen ops (proto.Op.Frozen: status and stop) may be called on
// the connection; every daemon, of any version, serves them the same way,
// so that `muster daemon stop` stops a daemon this binary cannot talk to.
func DialFrozen(ctx context.Context, dirs paths.Dirs) (*Client, error) {
	return connect(ctx, dirs)
}

func connect(ctx context.Context, dirs paths.Dirs) (*Client, error) {
	dialer := net.Dialer{Timeout: 2 * time.Second}
	conn, err := dialer.DialContext(ctx, "unix", dirs.ControlSocket())
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, ErrDaemonNotRunning
		}
		return nil, fmt.Errorf("connect to daemon: %w", err)
	}
	return &Client{conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}, nil
}

// exchangeVersions sends hello. A daemon from before hello (control
// protocol 1) answers it as an unknown op (or, to a process inside a
// pane, as a refused one); its status still says its version.
func (c *Client) exchangeVersions(ctx context.Context, version string) error {
	var res proto.HelloResult
	err := c.Call(ctx, proto.OpHello, proto.Hello{Protocol: proto.ControlVersion, Version: version}, &res)
	pe, refused := errors.AsType[*proto.Error](err)
	switch {
	case err == nil && res.Protocol == proto.ControlVersion:
		c.hello = true
		return nil
	case err == nil:
		return proto.VersionMismatch(res.Version, res.Protocol, version, proto.ControlVersion)
	case !refused || pe.Code == proto.CodeVersion || pe.Code == proto.CodeBusy:
		return err
	}
	var st proto.DaemonStatus
	if c.Call(ctx, proto.OpStatus, nil, &st) != nil {
		st = proto.DaemonStatus{}
	}
	return proto.VersionMismatch(st.Version, max(st.Protocol, 1), version, proto.ControlVersion)
}

// Ensure connects to the daemon, starting it in the background first when
// none is running.
func Ensure(ctx context.Context, dirs paths.Dirs, version string) (*Client, error) {
	c, err := Dial(ctx, dirs, version)
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, ErrDaemonNotRunning) {
		return nil, err
	}
	if err := StartDaemon(dirs); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := Dial(ctx, dirs, version)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, ErrDaemonNotRunning) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("daemon did not start; see %s", filepath.Join(dirs.State, "daemon.log"))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// StartDaemon launches `muster daemon --foreground` detached from the caller's
// session, with its output going to the daemon log only.
func StartDaemon(dirs paths.Dirs) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find muster executable: %w", err)
	}
	if err := dirs.EnsureState(); err != nil {
		return err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	cmd := exec.Command(exe, "daemon", "--foreground", "--quiet")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/"
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start daemon: %w", err)
	}
	// The daemon outlives us; reap it only if it dies while we still run.
	go cmd.Wait()
	return nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Conn exposes the connection for ops that switch to frames (attach).
func (c *Client) Conn() net.Conn { return c.conn }

// Reader is the buffered reader over Conn; frames must be read from it
// because it may already hold bytes.
func (c *Client) Reader() *bufio.Reader { return c.r }

// Call sends one request and decodes the result into out (which may be
// nil); a daemon-side failure comes back as *proto.Error. op must be in
// proto.Ops. When ctx ends first, Call returns ctx's error at once and the
// connection can carry no further call (close it).
func (c *Client) Call(ctx context.Context, op string, args, out any) error {
	if c.broken != nil {
		return c.broken
	}
	o, ok := proto.Lookup(op)
	if !ok {
		return fmt.Errorf("call daemon: op %q is not in proto.Ops", op)
	}
	if !c.hello && !o.Frozen && op != proto.OpHello {
		return fmt.Errorf("call daemon: op %q before the version exchange", op)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Now()) })
	err := c.send(op, args)
	if err == nil {
		err = c.recv(out)
	}
	if !stop() || ctx.Err() != nil {
		// The deadline may have cut the request or its response short.
		c.broken = fmt.Errorf("call daemon: an earlier call was cancelled: %w", context.Cause(ctx))
		return context.Cause(ctx)
	}
	return err
}

// CallPassing is Call with f passed to the daemon along with the request
// (SCM_RIGHTS): attach passes the user's terminal this way, for the daemon
// to write the pane to it and read its keys without this process in
// between. The daemon keeps its own descriptor; f stays the caller's.
func (c *Client) CallPassing(ctx context.Context, op string, args, out any, f *os.File) error {
	if _, ok := c.conn.(*net.UnixConn); !ok || f == nil {
		return c.Call(ctx, op, args, out)
	}
	c.passing = f
	defer func() { c.passing = nil }()
	return c.Call(ctx, op, args, out)
}

// send writes one request.
func (c *Client) send(op string, args any) error {
	req := proto.Request{Op: op}
	if args != nil {
		raw, err := json.Marshal(args)
		if err != nil {
			return err
		}
		req.Args = raw
	}
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if uc, ok := c.conn.(*net.UnixConn); ok && c.passing != nil {
		n, _, err := uc.WriteMsgUnix(line, syscall.UnixRights(int(c.passing.Fd())), nil)
		if err == nil && n < len(line) {
			_, err = c.conn.Write(line[n:])
		}
		if err != nil {
			return fmt.Errorf("talk to daemon: %w", err)
		}
		return nil
	}
	if _, err := c.conn.Write(line); err != nil {
		return fmt.Errorf("talk to daemon: %w", err)
	}
	return nil
}

// recv reads one response.
func (c *Client) recv(out any) error {
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("daemon closed the connection: %w", err)
	}
	var resp proto.Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("bad response from daemon: %w", err)
	}
	if !resp.OK {
		if resp.Error == nil {
			return &proto.Error{Code: proto.CodeInternal, Message: "daemon failed without a reason"}
		}
		return resp.Error
	}
	if out != nil && len(resp.Result) > 0 {
		if err := json.Unmarshal(resp.Result, out); err != nil {
			return fmt.Errorf("bad response from daemon: %w", err)
		}
	}
	return nil
}

// Open starts an op whose Flow is proto.Stream and decodes its first
// result into out; Recv reads each next one. The connection then carries
// nothing else: Close ends the stream (and wakes a blocked Recv).
func (c *Client) Open(ctx context.Context, op string, args, out any) error {
	if o, ok := proto.Lookup(op); ok && o.Flow != proto.Stream {
		return fmt.Errorf("call daemon: op %q is not a stream", op)
	}
	if err := c.Call(ctx, op, args, out); err != nil {
		return err
	}
	c.broken = fmt.Errorf("call daemon: the connection carries a %s stream", op)
	return nil
}

// Recv waits for the next result of a stream started by Open and decodes
// it into out. It returns io.EOF once the daemon ended the stream.
func (c *Client) Recv(out any) error {
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return io.EOF
		}
		return fmt.Errorf("daemon closed the connection: %w", err)
	}
	var resp proto.Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("bad response from daemon: %w", err)
	}
	if !resp.OK {
		if resp.Error == nil {
			return &proto.Error{Code: proto.CodeInternal, Message: "daemon failed without a reason"}
		}
		return resp.Error
	}
	if out != nil && len(resp.Result) > 0 {
		if err := json.Unmarshal(resp.Result, out); err != nil {
			return fmt.Errorf("bad response from daemon: %w", err)
		}
	}
	return nil
}
