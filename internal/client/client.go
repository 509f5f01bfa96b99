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
	"strings"
	"syscall"
	"time"

	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
)

// ErrDaemonNotRunning means no daemon answers on the control socket; callers
// that may start one should use Ensure instead of Dial.
var ErrDaemonNotRunning = errors.New("the muster daemon is not running")

// ErrConnectionLost means the daemon closed the connection before it
// answered: it died, or is dying (a kill -9 lands between a connect and
// the answer). A new daemon may already be listening.
var ErrConnectionLost = errors.New("the daemon closed the connection")

// Bounds on waiting for a daemon. They end a call only when the daemon
// gives no answer at all (stopped with SIGSTOP, stuck): every one is far
// above what a working daemon takes.
const (
	connectTimeout   = 2 * time.Second
	handshakeTimeout = 5 * time.Second
	// startTimeout bounds starting a daemon and waiting for one that
	// another process is starting.
	startTimeout = 10 * time.Second
	// stuckAfter is how long a daemon whose lock says it serves (or is
	// stopping) may leave control.sock without an answer before it counts
	// as stuck; one killed with SIGKILL lets go within milliseconds.
	stuckAfter = time.Second
)

// replyTimeout bounds one call whose ctx has no deadline of its own; 0
// means none (wait blocks as long as its caller stays). For an attach, a
// preview or a watch it bounds the first answer only.
func replyTimeout(o proto.Op) time.Duration {
	switch o.Name {
	case proto.OpResume:
		// Relaunches sessions one by one, each watched for a while.
		return 10 * time.Minute
	case proto.OpNew, proto.OpSend, proto.OpKill, proto.OpRename, proto.OpNativeCapture:
		return time.Minute
	}
	if o.Flow == proto.Blocking {
		return 0
	}
	return 15 * time.Second
}

// idempotent ops may be sent again, to a new daemon, when the one that
// had the request died before answering.
func idempotent(op string) bool {
	switch op {
	case proto.OpHello, proto.OpStatus, proto.OpList, proto.OpCapture, proto.OpExplain, proto.OpAttention:
		return true
	}
	return false
}

// NoAnswerError is a daemon that accepted the connection but did not
// answer in time.
type NoAnswerError struct {
	Socket string
	PID    int // 0 when unknown
	Op     string
	After  time.Duration
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("%s at %s did not answer %s within %s", daemonName(e.PID), e.Socket, e.Op, e.After)
}

// StuckError is a daemon that holds this home's lock but does not answer
// on control.sock, so that no other can start.
type StuckError struct {
	Socket string
	PID    int
	Phase  string
}

func (e *StuckError) Error() string {
	return fmt.Sprintf("%s holds this home's lock (%s) but does not answer on %s", daemonName(e.PID), e.Phase, e.Socket)
}

// StartError is a daemon that exited before it answered, with what it
// wrote to stderr.
type StartError struct {
	Reason string // the daemon's last line on stderr; "" when it said nothing
	Status string // how the process ended
	Log    string
}

func (e *StartError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("the daemon could not start (%s); see %s", e.Status, e.Log)
	}
	return "the daemon could not start: " + e.Reason
}

func daemonName(pid int) string {
	if pid == 0 {
		return "the daemon"
	}
	return fmt.Sprintf("the daemon (pid %d)", pid)
}

// lostError is a connection that ended under a call.
type lostError struct {
	socket string
	err    error
}

func (e *lostError) Error() string {
	return fmt.Sprintf("the daemon at %s closed the connection: %v", e.socket, e.err)
}
func (e *lostError) Unwrap() error        { return e.err }
func (e *lostError) Is(target error) bool { return target == ErrConnectionLost }

// gone reports whether err means that no daemon serves the socket (any
// more): one may be started, or the call tried again.
func gone(err error) bool {
	return errors.Is(err, ErrDaemonNotRunning) || errors.Is(err, ErrConnectionLost)
}

// Client is one connection to control.sock. It is not safe for concurrent use.
type Client struct {
	conn net.Conn
	r    *bufio.Reader
	// hello is set once the versions matched; before, only the frozen ops
	// may be called.
	hello bool
	// protocol is the control protocol hello settled on: ours, or the
	// older one of a daemon that does not speak ours (proto.Speaks).
	protocol int
	// broken is why the connection cannot carry another call: a call was
	// cancelled with its response still on the way.
	broken error
	// passing is the file the request being sent passes (CallPassing).
	passing *os.File

	dirs    paths.Dirs
	version string
	// redial connects again after the daemon died under an idempotent
	// call, the way this client first connected; nil: never.
	redial func(ctx context.Context) (*Client, error)
	// Notes is what a daemon this client started wrote on its way up (a
	// database moved aside, a config ignored), for the caller to show.
	Notes string
	// far, when set, names the daemon at the other end of a stream that
	// is not this machine's control.sock (a host's, through its relay):
	// errors name it, and no descriptor is ever passed over it.
	far string
}

// Dial connects to a running daemon and exchanges versions with it;
// version is this binary's, for the daemon's log and the mismatch message.
// A daemon of another control protocol gives a *proto.Error with
// proto.CodeVersion, saying to run `muster daemon restart`.
func Dial(ctx context.Context, dirs paths.Dirs, version string) (*Client, error) {
	c, err := dial(ctx, dirs, version)
	if err != nil {
		return nil, err
	}
	c.redial = func(ctx context.Context) (*Client, error) { return dial(ctx, dirs, version) }
	return c, nil
}

func dial(ctx context.Context, dirs paths.Dirs, version string) (*Client, error) {
	c, err := connect(ctx, dirs)
	if err != nil {
		return nil, err
	}
	c.version = version
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
	c, err := connect(ctx, dirs)
	if err != nil {
		return nil, err
	}
	c.redial = func(ctx context.Context) (*Client, error) { return connect(ctx, dirs) }
	return c, nil
}

// Over runs the version exchange over conn, a stream to a daemon other
// than this machine's (a host's, through `muster relay` over ssh), and
// returns the client on it; where names that daemon in errors ("host
// h1"). Descriptors cannot cross such a stream, so CallPassing sends no
// file over it, and a lost connection is not dialled again: the caller
// knows how to reach the far end, this package does not. Close closes
// conn; on an error conn is left open, for the caller to learn from the
// far end why it failed.
func Over(ctx context.Context, conn net.Conn, where, version string) (*Client, error) {
	c := &Client{conn: conn, r: bufio.NewReaderSize(conn, 64<<10), far: where, version: version}
	if err := c.exchangeVersions(ctx, version); err != nil {
		return nil, err
	}
	return c, nil
}

// socket names the daemon's end of the connection for errors.
func (c *Client) socket() string {
	if c.far != "" {
		return c.far
	}
	return c.dirs.ControlSocket()
}

func connect(ctx context.Context, dirs paths.Dirs) (*Client, error) {
	dialer := net.Dialer{Timeout: connectTimeout}
	conn, err := dialer.DialContext(ctx, "unix", dirs.ControlSocket())
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, ErrDaemonNotRunning
		}
		return nil, fmt.Errorf("connect to the daemon at %s: %w", dirs.ControlSocket(), err)
	}
	return &Client{conn: conn, r: bufio.NewReaderSize(conn, 64<<10), dirs: dirs}, nil
}

// exchangeVersions sends hello with this binary's protocol. A daemon
// that speaks it answers with it; an older one refuses it, and when this
// binary speaks that daemon's protocol (its status says which) the
// connection settles on it with a second hello. A daemon from before
// hello (control protocol 1) answers it as an unknown op (or, to a
// process inside a pane, as a refused one); its status still says its
// version.
func (c *Client) exchangeVersions(ctx context.Context, version string) error {
	var res proto.HelloResult
	ctx, cancel := context.WithTimeoutCause(ctx, handshakeTimeout, c.noAnswer(proto.OpHello, handshakeTimeout))
	defer cancel()
	err := c.call(ctx, proto.OpHello, proto.Hello{Protocol: proto.ControlVersion, Version: version}, &res)
	pe, refused := errors.AsType[*proto.Error](err)
	switch {
	case err == nil && res.Protocol == proto.ControlVersion:
		c.hello, c.protocol = true, res.Protocol
		return nil
	case err == nil:
		return proto.VersionMismatch(res.Version, res.Protocol, version, proto.ControlVersion)
	case refused && pe.Code == proto.CodeVersion:
		var st proto.DaemonStatus
		if c.call(ctx, proto.OpStatus, nil, &st) != nil || st.Protocol >= proto.ControlVersion || !proto.Speaks(st.Protocol) {
			return err
		}
		if c.call(ctx, proto.OpHello, proto.Hello{Protocol: st.Protocol, Version: version}, &res) != nil || res.Protocol != st.Protocol {
			return err
		}
		c.hello, c.protocol = true, res.Protocol
		return nil
	case !refused || pe.Code == proto.CodeBusy:
		return err
	}
	var st proto.DaemonStatus
	if c.call(ctx, proto.OpStatus, nil, &st) != nil {
		st = proto.DaemonStatus{}
	}
	return proto.VersionMismatch(st.Version, max(st.Protocol, 1), version, proto.ControlVersion)
}

// Protocol is the control protocol the connection speaks: this binary's,
// or the older one of the daemon (proto.MinControlVersion on), which
// serves every op but an attach that passes the terminal
// (proto.DirectAttach).
func (c *Client) Protocol() int { return c.protocol }

func (c *Client) noAnswer(op string, after time.Duration) *NoAnswerError {
	if c.far != "" {
		return &NoAnswerError{Socket: c.far, Op: op, After: after}
	}
	return &NoAnswerError{Socket: c.dirs.ControlSocket(), PID: c.dirs.ReadDaemonLock().PID, Op: op, After: after}
}

// Ensure connects to the daemon, starting it in the background first when
// none is running.
func Ensure(ctx context.Context, dirs paths.Dirs, version string) (*Client, error) {
	return EnsureFrom(ctx, "", dirs, version)
}

// EnsureFrom is Ensure starting the daemon from the muster binary exe (""
// for this process's own).
func EnsureFrom(ctx context.Context, exe string, dirs paths.Dirs, version string) (*Client, error) {
	redial := func(ctx context.Context) (*Client, error) { return ensure(ctx, exe, dirs, version) }
	c, err := redial(ctx)
	if err != nil {
		return nil, err
	}
	c.redial = redial
	return c, nil
}

func ensure(ctx context.Context, exe string, dirs paths.Dirs, version string) (*Client, error) {
	c, err := dial(ctx, dirs, version)
	if err == nil || !gone(err) {
		return c, err
	}
	if err := dirs.EnsureRuntime(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(startTimeout)
	// Clients that find no daemon start one at a time: the first starts
	// it, the others find it answering once they hold the lock.
	unlock, err := lockStart(ctx, dirs, deadline)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var unanswered time.Time
	for {
		c, err := dial(ctx, dirs, version)
		if err == nil || !gone(err) {
			return c, err
		}
		h := dirs.ReadDaemonLock()
		switch {
		case !h.Held:
			unanswered = time.Time{}
			c, err := spawn(ctx, exe, dirs, version, deadline)
			if c != nil || err != nil {
				return c, err
			}
			// It lost the lock to a daemon started some other way.
		case h.Phase == paths.PhaseStarting || h.Phase == "":
			// Another daemon is on its way up: it is waited for.
		case unanswered.IsZero():
			unanswered = time.Now()
		case time.Since(unanswered) > stuckAfter:
			return nil, &StuckError{Socket: dirs.ControlSocket(), PID: h.PID, Phase: h.Phase}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s did not start answering on %s within %s; see %s",
				daemonName(h.PID), dirs.ControlSocket(), startTimeout, filepath.Join(dirs.State, "daemon.log"))
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// lockStart takes start.lock, polling so that ctx and the deadline still
// end the wait.
func lockStart(ctx context.Context, dirs paths.Dirs, deadline time.Time) (func(), error) {
	f, err := os.OpenFile(dirs.StartLock(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dirs.StartLock(), err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", dirs.StartLock(), err)
		}
		if time.Now().After(deadline) {
			f.Close()
			h := dirs.ReadDaemonLock()
			return nil, fmt.Errorf("another muster is still starting %s after %s", daemonName(h.PID), startTimeout)
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			f.Close()
			return nil, err
		}
	}
}

// spawn starts `muster daemon --foreground` detached from the caller's
// session and waits until it answers (its client), exits (*StartError,
// or nil, nil when another daemon took the lock first) or the deadline
// passes. Its stderr goes to paths.DaemonStderr, where it says why it
// could not start.
func spawn(ctx context.Context, exe string, dirs paths.Dirs, version string, deadline time.Time) (*Client, error) {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find muster executable: %w", err)
		}
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	stderr, err := os.OpenFile(dirs.DaemonStderr(), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	defer stderr.Close()
	cmd := exec.Command(exe, "daemon", "--foreground", "--quiet")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/"
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	// The daemon outlives us; reap it only if it dies while we still run.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		c, err := dial(ctx, dirs, version)
		if err == nil {
			c.Notes = readStderr(dirs)
			return c, nil
		}
		if !gone(err) {
			return nil, err
		}
		select {
		case werr := <-exited:
			if h := dirs.ReadDaemonLock(); h.Held {
				return nil, nil
			}
			status := "exit status 0"
			if werr != nil {
				status = werr.Error()
			}
			return nil, &StartError{Reason: lastLine(readStderr(dirs)), Status: status, Log: filepath.Join(dirs.State, "daemon.log")}
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the daemon (pid %d) did not start answering on %s within %s; see %s",
				cmd.Process.Pid, dirs.ControlSocket(), startTimeout, filepath.Join(dirs.State, "daemon.log"))
		}
	}
}

// readStderr is what the daemon wrote to its stderr so far, bounded.
func readStderr(dirs paths.Dirs) string {
	f, err := os.Open(dirs.DaemonStderr())
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 16<<10))
	return strings.TrimSpace(string(b))
}

// lastLine is the error line of a daemon's stderr: the CLI prints the
// error, then hints indented below it.
func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if l != "" && !strings.HasPrefix(l, " ") {
			return strings.TrimPrefix(l, "muster: ")
		}
	}
	return ""
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
// connection can carry no further call (close it). A ctx without a
// deadline gets the op's own bound (*NoAnswerError). An idempotent op
// whose daemon died under it is sent once more, to a new daemon.
func (c *Client) Call(ctx context.Context, op string, args, out any) error {
	o, ok := proto.Lookup(op)
	if !ok {
		return fmt.Errorf("call daemon: op %q is not in proto.Ops", op)
	}
	err := c.callBounded(ctx, o, args, out)
	if err == nil || !errors.Is(err, ErrConnectionLost) || !idempotent(op) || c.redial == nil || c.passing != nil || ctx.Err() != nil {
		return err
	}
	nc, rerr := c.redial(ctx)
	if rerr != nil {
		return fmt.Errorf("%w; then: %w", err, rerr)
	}
	c.conn.Close()
	c.conn, c.r, c.hello, c.protocol, c.broken = nc.conn, nc.r, nc.hello, nc.protocol, nil
	if nc.Notes != "" {
		c.Notes = nc.Notes
	}
	return c.callBounded(ctx, o, args, out)
}

func (c *Client) callBounded(ctx context.Context, o proto.Op, args, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		if d := replyTimeout(o); d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, d, c.noAnswer(o.Name, d))
			defer cancel()
		}
	}
	return c.call(ctx, o.Name, args, out)
}

func (c *Client) call(ctx context.Context, op string, args, out any) error {
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
		return context.Cause(ctx)
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
	if _, ok := c.conn.(*net.UnixConn); !ok || f == nil || c.far != "" {
		return c.Call(ctx, op, args, out)
	}
	c.passing = f
	defer func() { c.passing = nil }()
	return c.Call(ctx, op, args, out)
}

// lost classifies an error of the connection itself: the ones that mean
// the daemon is gone are *lostError.
func (c *Client) lost(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return &lostError{socket: c.socket(), err: err}
	}
	return fmt.Errorf("talk to the daemon at %s: %w", c.socket(), err)
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
			return c.lost(err)
		}
		return nil
	}
	if _, err := c.conn.Write(line); err != nil {
		return c.lost(err)
	}
	return nil
}

// recv reads one response.
func (c *Client) recv(out any) error {
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		return c.lost(err)
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
	c.redial = nil
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
		return c.lost(err)
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
