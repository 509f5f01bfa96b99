// Package client dials the daemon's control socket, starting the daemon on
// demand, and speaks the proto control API.
package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
}

// Dial connects to a running daemon.
func Dial(dirs paths.Dirs) (*Client, error) {
	conn, err := net.DialTimeout("unix", dirs.ControlSocket(), 2*time.Second)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, ErrDaemonNotRunning
		}
		return nil, fmt.Errorf("connect to daemon: %w", err)
	}
	return &Client{conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}, nil
}

// Ensure connects to the daemon, starting it in the background first when
// none is running.
func Ensure(ctx context.Context, dirs paths.Dirs) (*Client, error) {
	c, err := Dial(dirs)
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
		c, err := Dial(dirs)
		if err == nil {
			return c, nil
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

// Call sends one request and decodes the result into out (which may be nil).
func (c *Client) Call(op string, args, out any) error {
	if err := c.Send(op, args); err != nil {
		return err
	}
	return c.Recv(out)
}

// Send writes one request.
func (c *Client) Send(op string, args any) error {
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
	if _, err := c.conn.Write(line); err != nil {
		return fmt.Errorf("talk to daemon: %w", err)
	}
	return nil
}

// Recv reads one response; a daemon-side failure comes back as *proto.Error.
func (c *Client) Recv(out any) error {
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
