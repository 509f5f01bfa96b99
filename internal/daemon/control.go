package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/panepeer"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/unixsock"
)

// This file is the control-socket server: accepting connections, the
// version exchange, reading requests and writing replies, the access rule
// of every op (gate) and the table of ops (routes). The ops themselves are
// in sessions.go, new.go, attach.go and the event engine.

// serveControl accepts control connections until ctx ends (nil) or the
// listener dies (its error).
func (d *Daemon) serveControl(ctx context.Context, ln *net.UnixListener) error {
	limit := logLimiter{every: 10 * time.Second}
	backoff := 5 * time.Millisecond
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			select {
			case <-ctx.Done():
				return nil
			default:
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("control.sock: %w", err)
			}
			// Out of file descriptors: an idle client gives one back, so
			// the connection waiting in the backlog (a real command, most
			// likely) gets in.
			freed := false
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				freed = d.ctl.evictIdle()
			}
			if ok, dropped := limit.allow(time.Now()); ok {
				d.logger.Error("accept control connection", "err", err, "repeats_suppressed", dropped, "freed_idle", freed)
			}
			if !freed {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, time.Second)
			}
			continue
		}
		backoff = 5 * time.Millisecond
		cred, err := unixsock.PeerCred(conn)
		if err != nil || cred.UID != os.Getuid() {
			d.logger.Warn("refused control connection from another user", "uid", cred.UID, "err", err)
			conn.Close()
			continue
		}
		c := d.ctl.admit(conn, cred.PID)
		if c == nil {
			refuseBusy(conn)
			if ok, dropped := limit.allow(time.Now()); ok {
				d.logger.Warn("refused control connection: every slot is busy", "pid", cred.PID, "repeats_suppressed", dropped)
			}
			continue
		}
		d.conns.Add(1)
		go func() {
			defer d.conns.Done()
			defer d.ctl.remove(c)
			d.handleConn(ctx, c)
		}()
	}
}

// refuseBusy answers a connection the daemon has no room for, without
// waiting on a client that does not read.
func refuseBusy(conn *net.UnixConn) {
	conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	replier{w: conn}.fail(&proto.Error{Code: proto.CodeBusy,
		Message: "the daemon has too many open control connections",
		Hint:    "retry shortly; `muster daemon status` shows whether it is up"})
	conn.Close()
}

// replier writes responses on one connection.
type replier struct {
	w io.Writer
}

// deadlineWriter bounds each write, so that a client that never reads
// cannot hold its handler forever; the deadline is cleared after each
// write because attach writes frames on the same connection.
type deadlineWriter struct{ c *net.UnixConn }

func (w deadlineWriter) Write(b []byte) (int, error) {
	w.c.SetWriteDeadline(time.Now().Add(controlWriteTimeout))
	n, err := w.c.Write(b)
	w.c.SetWriteDeadline(time.Time{})
	return n, err
}

func (r replier) ok(result any) error {
	resp := proto.Response{OK: true}
	if result != nil {
		raw, err := json.Marshal(result)
		if err != nil {
			return err
		}
		resp.Result = raw
	}
	return r.write(resp)
}

func (r replier) fail(err error) error {
	var pe *proto.Error
	if !errors.As(err, &pe) {
		pe = &proto.Error{Code: proto.CodeInternal, Message: err.Error()}
	}
	return r.write(proto.Response{OK: false, Error: pe})
}

func (r replier) write(resp proto.Response) error {
	line, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	_, err = r.w.Write(append(line, '\n'))
	return err
}

func (d *Daemon) handleConn(ctx context.Context, c *ctlConn) {
	conn := c.conn
	defer conn.Close()
	// A connection closes when the daemon shuts down, even mid-request.
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })
	defer stop()
	passed := newPassedReader(conn)
	defer passed.close()
	br := bufio.NewReaderSize(passed, 64<<10)
	rep := replier{w: deadlineWriter{conn}}
	// Who is on the other end is worked out once, at the first request
	// that needs it.
	var where *panepeer.Where
	peer := func() panepeer.Where {
		if where == nil {
			w := d.whereIs(ctx, c.pid)
			where = &w
			if w.InPane {
				d.logger.Debug("control client inside a pane", "pid", w.PID, "session_id", w.SessionID, "how", w.How)
			}
		}
		return *where
	}
	// hello is set once the client's protocol matched ours; before, only
	// the frozen ops are served. protocol is the one hello settled on.
	hello := false
	protocol := 0
	for {
		d.ctl.setIdle(c, true)
		conn.SetReadDeadline(time.Now().Add(controlIdleTimeout))
		if ctx.Err() != nil {
			return
		}
		line, err := readLine(br, proto.MaxControlRequest)
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				rep.fail(proto.Errorf(proto.CodeBadRequest, "request larger than %d bytes", proto.MaxControlRequest))
			}
			return
		}
		d.ctl.setIdle(c, false)
		conn.SetReadDeadline(time.Time{})
		if ctx.Err() != nil {
			return
		}
		var req proto.Request
		if err := json.Unmarshal(line, &req); err != nil {
			rep.fail(proto.Errorf(proto.CodeBadRequest, "malformed request: %v", err))
			return
		}
		op, known := proto.Lookup(req.Op)
		if known && !hello && !op.Frozen {
			// A client from before hello (control protocol 1).
			d.logger.Info("control client of another protocol", "op", req.Op, "pid", c.pid, "protocol", 1)
			if rep.fail(proto.VersionMismatch(d.opts.Version, proto.ControlVersion, "", 1)) != nil {
				return
			}
			continue
		}
		if err := d.gate(peer, op, known, req.Args); err != nil {
			w := peer()
			d.logger.Info("refused control request from inside a pane", "op", req.Op, "pid", c.pid, "session_id", w.SessionID, "how", w.How)
			if rep.fail(err) != nil {
				return
			}
			continue
		}
		if op.Flow == proto.Blocking || op.Flow == proto.Frames || op.Flow == proto.Stream {
			if !d.ctl.longLived(c) {
				rep.fail(&proto.Error{Code: proto.CodeBusy,
					Message: "the daemon is serving too many waits and attaches", Hint: "retry shortly"})
				return
			}
		}
		rctx := context.WithValue(ctx, peerKey{}, peer)
		switch op.Flow {
		case proto.Handshake:
			res, err := d.hello(req.Args, c.pid)
			if err != nil {
				if rep.fail(err) != nil {
					return
				}
				continue
			}
			hello, protocol = true, res.Protocol
			if rep.ok(res) != nil {
				return
			}
			continue
		case proto.Frames:
			take := passed.take
			if !proto.DirectAttach(protocol) {
				// An older client would misread this daemon's
				// handbacks: it keeps its terminal and relays.
				take = func() int {
					if fd := passed.take(); fd >= 0 {
						unix.Close(fd)
					}
					return -1
				}
			}
			d.attach(rctx, conn, br, req.Args, take)
			return
		case proto.Stream:
			if op.Name == proto.OpWatch {
				d.watch(rctx, conn, br)
			} else {
				d.preview(rctx, conn, br, req.Args)
			}
			return
		case proto.Blocking:
			// A blocking op ends the connection's life: it is cancelled
			// when the client hangs up, so no goroutine waits for a state
			// nobody will read.
			wctx, cancel := context.WithCancel(rctx)
			go func() {
				br.Peek(1)
				cancel()
			}()
			rep.write(d.mux.Serve(wctx, req))
			cancel()
			return
		}
		rctx, done := untilHangup(rctx, conn, br)
		resp := d.mux.Serve(rctx, req)
		done()
		if rep.write(resp) != nil || op.Flow == proto.Last {
			return
		}
	}
}

// untilHangup returns a ctx for one request that also ends when the client
// hangs up (or shuts its side) before the response, so that a send's
// pauses or a resume's wait stop at once. done must be called when the
// request is over and before br is read again.
func untilHangup(ctx context.Context, conn *net.UnixConn, br *bufio.Reader) (context.Context, func()) {
	if br.Buffered() > 0 {
		// The client already sent its next request: it is still there.
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if _, err := br.Peek(1); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			cancel(errClientGone)
		}
	}()
	return ctx, func() {
		conn.SetReadDeadline(time.Now()) // wakes the Peek
		<-watched
		conn.SetReadDeadline(time.Time{})
		cancel(nil)
	}
}

// hello answers the version exchange: the connection speaks the client's
// protocol when this daemon speaks it too (an older client's, down to
// proto.MinControlVersion), else the client hears this daemon's.
func (d *Daemon) hello(raw json.RawMessage, pid int) (proto.HelloResult, error) {
	var h proto.Hello
	if err := proto.DecodeArgs(raw, &h); err != nil {
		return proto.HelloResult{}, err
	}
	if !proto.Speaks(h.Protocol) {
		d.logger.Info("control client of another protocol", "pid", pid, "protocol", h.Protocol, "version", h.Version)
		return proto.HelloResult{}, proto.VersionMismatch(d.opts.Version, proto.ControlVersion, h.Version, h.Protocol)
	}
	if h.Protocol != proto.ControlVersion {
		d.logger.Info("control client of an older protocol", "pid", pid, "protocol", h.Protocol, "version", h.Version)
	}
	return proto.HelloResult{Protocol: h.Protocol, Version: d.opts.Version, PID: os.Getpid()}, nil
}

// peerKey carries a request's peer (func() panepeer.Where) in its context, for
// the handlers of ops that check who asks.
type peerKey struct{}

// peerOf returns the peer of the request ctx belongs to. Outside a request
// it returns an unidentified peer inside a pane: the narrowest rights.
func peerOf(ctx context.Context) func() panepeer.Where {
	if p, ok := ctx.Value(peerKey{}).(func() panepeer.Where); ok {
		return p
	}
	return func() panepeer.Where { return panepeer.Unidentified(0) }
}

// gate applies an op's access rule (proto.Ops; see peer.go) to one request
// before it runs. Ops that act on one session check their target where
// they look it up; ack's items are checked here, because the engine that
// serves it knows nothing of panes.
func (d *Daemon) gate(peer func() panepeer.Where, op proto.Op, known bool, args json.RawMessage) error {
	if known && op.Access == proto.ReadOnly {
		return nil
	}
	if !known && d.peers == nil {
		return nil
	}
	p := peer()
	if !p.InPane || p.Control {
		return nil
	}
	if op.Name == proto.OpAck {
		return d.gateAck(p, args)
	}
	if known && op.Access == proto.OwnPane {
		return nil
	}
	name := op.Name
	if !known {
		name = ""
	}
	what, hint := refusalFor(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.forbiddenLocked(p, what, hint)
}

// gateAck lets a pane acknowledge the items of its own sessions only.
// Unknown ids are left for the engine to report.
func (d *Daemon) gateAck(p panepeer.Where, raw json.RawMessage) error {
	var a proto.AckArgs
	if err := proto.DecodeArgs(raw, &a); err != nil {
		return nil // the engine reports malformed arguments
	}
	if a.All {
		what, hint := refusalFor(proto.OpAck)
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.forbiddenLocked(p, what, hint)
	}
	items, err := d.events.Attention(proto.AttentionArgs{All: true})
	if err != nil {
		return nil // the engine reports why it cannot ack either
	}
	owner := map[int64]string{}
	for _, it := range items {
		owner[it.ID] = it.SessionID
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range a.IDs {
		sid, ok := owner[id]
		if !ok {
			continue
		}
		s, ok := d.sessions[sid]
		if !ok {
			return d.forbiddenLocked(p, fmt.Sprintf("it may not acknowledge attention item %d of another session", id),
				"a process inside a pane may acknowledge only the items of its own pane and the sessions it started")
		}
		if err := d.mayDriveLocked(p, s); err != nil {
			return d.forbiddenLocked(p, fmt.Sprintf("it may not acknowledge attention item %d of pane %q", id, s.rec.Name),
				"a process inside a pane may acknowledge only the items of its own pane and the sessions it started")
		}
	}
	return nil
}

func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			return nil, err
		}
		line = append(line, chunk...)
		if len(line) > limit {
			return nil, errLineTooLong
		}
		if !isPrefix {
			return line, nil
		}
	}
}

// routes registers every op the daemon serves through its one Mux: its own
// and the event engine's. hello and attach are answered by the connection
// (handleConn).
func (d *Daemon) routes() (*proto.Mux, error) {
	m := proto.NewMux()
	proto.Handle(m, proto.OpStatus, func(ctx context.Context, _ proto.None) (proto.DaemonStatus, error) {
		st := d.status()
		if p := peerOf(ctx)(); p.InPane {
			st.Caller = &proto.StatusCaller{Pane: p.Name, Control: p.Control}
		}
		return st, nil
	})
	proto.Handle(m, proto.OpStop, func(context.Context, proto.None) (proto.None, error) {
		d.logger.Info("stop requested")
		d.stop()
		return proto.None{}, nil
	})
	proto.Handle(m, proto.OpRestart, func(ctx context.Context, a proto.RestartArgs) (proto.None, error) {
		return proto.None{}, d.requestRestart(ctx, a)
	})
	proto.Handle(m, proto.OpList, func(context.Context, proto.None) ([]proto.SessionInfo, error) {
		return d.list(), nil
	})
	proto.Handle(m, proto.OpNew, func(ctx context.Context, a proto.NewArgs) (proto.SessionInfo, error) {
		parent := ""
		if p := peerOf(ctx)(); p.InPane {
			if a.Control {
				d.mu.Lock()
				defer d.mu.Unlock()
				return proto.SessionInfo{}, d.forbiddenLocked(p, "it may not make a control pane",
					"mark a pane as yours from a terminal outside muster")
			}
			parent = p.SessionID
		}
		return d.newSession(ctx, a, parent)
	})
	proto.Handle(m, proto.OpSend, func(ctx context.Context, a proto.SendArgs) (proto.None, error) {
		return proto.None{}, d.send(ctx, peerOf(ctx), a)
	})
	proto.Handle(m, proto.OpCapture, func(ctx context.Context, a proto.CaptureArgs) (proto.CaptureResult, error) {
		return d.capture(ctx, peerOf(ctx), a)
	})
	proto.Handle(m, proto.OpKill, func(ctx context.Context, a proto.Target) (proto.None, error) {
		return proto.None{}, d.kill(ctx, peerOf(ctx), a.Name)
	})
	proto.Handle(m, proto.OpRename, func(ctx context.Context, a proto.RenameArgs) (proto.None, error) {
		return proto.None{}, d.rename(ctx, peerOf(ctx), a)
	})
	proto.Handle(m, proto.OpNativeCapture, func(ctx context.Context, a proto.NativeCaptureArgs) (proto.None, error) {
		return proto.None{}, d.nativeCapture(ctx, peerOf(ctx), a)
	})
	proto.Handle(m, proto.OpResume, d.resume)
	proto.Handle(m, proto.OpWorktrees, func(ctx context.Context, _ proto.None) ([]proto.WorktreeInfo, error) {
		return d.listWorktrees(ctx)
	})
	proto.Handle(m, proto.OpWorktreeRm, d.removeWorktree)
	proto.Handle(m, proto.OpSetupConsent, func(ctx context.Context, a proto.SetupConsentArgs) (proto.None, error) {
		return proto.None{}, d.setupConsent(ctx, a)
	})
	proto.Handle(m, proto.OpAutocontinue, func(ctx context.Context, a proto.AutocontinueArgs) (proto.None, error) {
		return proto.None{}, d.autocontinue(peerOf(ctx), a)
	})
	proto.Handle(m, proto.OpSendConfirm, func(ctx context.Context, a proto.SendConfirmArgs) (proto.SendConfirmResult, error) {
		return d.sendConfirm(ctx, peerOf(ctx), a)
	})
	proto.Handle(m, proto.OpHostCall, d.hostCall)
	d.events.RegisterControl(m)
	if missing := m.Missing(); len(missing) > 0 {
		return nil, fmt.Errorf("control ops without a handler: %v", missing)
	}
	return m, nil
}

func (d *Daemon) status() proto.DaemonStatus {
	bg := mayHaveBackgroundAgents(os.Environ())
	d.mu.Lock()
	defer d.mu.Unlock()
	panes := 0
	for _, s := range d.sessions {
		if s.pane != nil {
			if exited, _ := s.pane.Exited(); !exited {
				panes++
			}
		}
	}
	return proto.DaemonStatus{
		PID: os.Getpid(), Version: d.opts.Version, StartedAt: d.startedAt.UTC().Format(time.RFC3339),
		Home: filepath.Dir(d.dirs.State), Sessions: len(d.sessions), Panes: panes,
		Protocol: proto.ControlVersion, Handoff: d.handoff, BackgroundAgents: bg,
	}
}

// mayHaveBackgroundAgents asks each provider with a supervisor of its own
// whether it may run agents for env's user; no CLI is run.
func mayHaveBackgroundAgents(env []string) bool {
	for _, bl := range all.Capable[provider.BackgroundLister]() {
		if bl.MayHaveBackgroundAgents(env) {
			return true
		}
	}
	return false
}
