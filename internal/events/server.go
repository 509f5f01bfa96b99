package events

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/runstate"
	"github.com/musterhq/muster/internal/unixsock"
)

// Precomputed responses: a response never carries anything from the request.
var (
	respInserted  = proto.EncodeEventResponse(proto.EventResponse{OK: true, Inserted: ptr(true)})
	respDuplicate = proto.EncodeEventResponse(proto.EventResponse{OK: true, Inserted: ptr(false)})
	respErr       = map[string][]byte{}
)

func init() {
	for _, c := range proto.EventErrorCodes {
		respErr[c] = proto.EncodeEventResponse(proto.EventResponse{Error: c})
	}
}

func ptr[T any](v T) *T { return &v }

// Serve answers events.sock on ln until ctx ends, and runs the engine's
// notifier, runs snapshots and checkpoints while it does. Start must have
// returned first. Serve closes ln, waits for the connections in flight and
// for every goroutine it started, then returns nil (or the accept error
// that stopped it).
func (e *Engine) Serve(ctx context.Context, ln *net.UnixListener) error {
	if !e.started.Load() {
		return fmt.Errorf("serve events: %w", ErrNotStarted)
	}
	if !e.serving.CompareAndSwap(false, true) {
		return errors.New("serve events: already serving")
	}
	// The notifier outlives the commits so that it can drain what they
	// queued.
	wctx, stopWorkers := context.WithCancel(context.Background())
	nctx, stopNotifier := context.WithCancel(context.Background())
	var workers, notifier sync.WaitGroup
	workers.Go(func() { e.maintain(wctx) })
	workers.Go(func() { e.checkpoint(wctx) })
	notifier.Go(func() { e.notifyLoop(nctx) })
	err := e.accept(ctx, ln)
	stopWorkers()
	workers.Wait()
	// A last runs snapshot, so that the next start has nothing to replay.
	e.Flush(context.Background())
	stopNotifier()
	notifier.Wait()
	return err
}

// workerIdle is how long an idle connection worker waits for the next
// connection before it exits.
const workerIdle = 10 * time.Second

// accept accepts connections as fast as they come and hands each to a
// worker goroutine. Workers live across connections so that the stacks
// that decoding grows are reused rather than grown again for every
// request; a connection that finds no idle worker starts a new one. The
// number of connections, hence of busy workers, is held to the caps by
// conns, which drops the oldest idle connection to make room.
func (e *Engine) accept(ctx context.Context, ln *net.UnixListener) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	work := make(chan *conn)
	var workers sync.WaitGroup
	defer workers.Wait()
	worker := func(cn *conn) {
		w := &connWorker{buf: make([]byte, 4096)}
		idle := time.NewTimer(workerIdle)
		defer idle.Stop()
		for {
			e.handle(ctx, cn, w)
			idle.Reset(workerIdle)
			select {
			case cn = <-work:
			case <-idle.C:
				return
			case <-ctx.Done():
				return
			}
		}
	}
	var delay time.Duration
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) || isTemporary(err) {
				// Out of file descriptors, typically: back off, and log
				// once in a while rather than at every retry.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				e.logEvery(&e.acceptLog, "accept on events.sock", "err", err)
				select {
				case <-time.After(delay):
				case <-ctx.Done():
					return nil
				}
				continue
			}
			return fmt.Errorf("serve events: %w", err)
		}
		delay = 0
		cred, err := unixsock.PeerCred(c)
		if err != nil || !e.cfg.PeerAllowed(cred.UID) {
			e.logEvery(&e.peerLog, "refused events.sock peer", "uid", cred.UID, "err", err)
			c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			c.Write(respErr[proto.ErrUnauthorized])
			c.Close()
			continue
		}
		c.SetReadDeadline(time.Now().Add(e.cfg.ReadTimeout))
		cn, dropped, ok := e.conns.admit(c, cred.PID)
		if dropped > 0 || !ok {
			e.logEvery(&e.capLog, "events.sock connection cap reached; dropped the oldest idle connections", "pid", cred.PID, "refused", !ok)
		}
		if !ok {
			c.Close()
			continue
		}
		select {
		case work <- cn:
		default:
			workers.Go(func() { worker(cn) })
		}
	}
}

// connWorker is what one worker keeps between connections.
type connWorker struct {
	buf []byte // grows up to MaxEventRequest
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// handle answers one connection: one request, one response, close. The
// whole request must arrive within Config.ReadTimeout of the accept.
func (e *Engine) handle(ctx context.Context, cn *conn, w *connWorker) {
	c := cn.c
	defer c.Close()
	defer e.conns.done(cn)
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	buf := w.buf
	n := 0
	var line []byte
	for line == nil {
		if n == len(buf) && len(buf) < proto.MaxEventRequest {
			buf = append(buf, make([]byte, min(2*len(buf), proto.MaxEventRequest)-len(buf))...)
			w.buf = buf
		}
		m, err := c.Read(buf[n:])
		if m > 0 {
			if i := bytes.IndexByte(buf[n:n+m], '\n'); i >= 0 {
				line = buf[:n+i]
				break
			}
			n += m
			if n == proto.MaxEventRequest {
				e.answer(cn, respErr[proto.ErrTooLarge])
				return
			}
		}
		if err != nil {
			switch {
			case errors.Is(err, os.ErrDeadlineExceeded):
				if ctx.Err() != nil {
					return // shutting down
				}
				e.answer(cn, respErr[proto.ErrTimeout])
				return
			case errors.Is(err, io.EOF) && n > 0:
				line = buf[:n] // complete at EOF without a newline
			default:
				return // dropped, or the client went away
			}
		}
	}
	if !e.conns.busy(cn) {
		return // dropped for a newer connection
	}
	resp := e.ingest(ctx, line, len(line)+1, cn.pid)
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(resp)
}

// answer writes an error response to a connection still being read,
// unless it was dropped meanwhile.
func (e *Engine) answer(cn *conn, resp []byte) {
	if e.conns.busy(cn) {
		cn.c.SetWriteDeadline(time.Now().Add(time.Second))
		cn.c.Write(resp)
	}
}

// logEvery logs at most once every logInterval per kind, with how many it
// left out meanwhile.
func (e *Engine) logEvery(l *rateLog, msg string, args ...any) {
	now := time.Now()
	l.mu.Lock()
	if now.Before(l.next) {
		l.skipped++
		l.mu.Unlock()
		return
	}
	skipped := l.skipped
	l.next, l.skipped = now.Add(logInterval), 0
	l.mu.Unlock()
	if skipped > 0 {
		args = append(args, "not logged since", skipped)
	}
	e.log.Warn(msg, args...)
}

// rateLog is the state of one logEvery kind.
type rateLog struct {
	mu      sync.Mutex
	next    time.Time
	skipped int
}

const logInterval = 10 * time.Second

// ingest decodes, authorizes and records one request of size bytes from
// process pid (0: unknown) and returns the response line.
func (e *Engine) ingest(ctx context.Context, line []byte, size, pid int) []byte {
	now := e.now()
	req, code := proto.DecodeEnvelope(line, now, e.cfg.MaxFutureSkew)
	if code != "" {
		return respErr[code]
	}
	surf, why := e.authorize(&req.Event, req.Capability)
	if surf == nil {
		e.log.Debug("unauthorized event", "provider", req.Event.Provider, "why", why)
		return respErr[proto.ErrUnauthorized]
	}
	if e.cfg.Senders != nil && e.routers[req.Event.Provider] == nil {
		// After the capability, so that only a sender holding one pays
		// for reading /proc.
		if err := e.cfg.Senders.MayRecord(pid, surf.SessionID); err != nil {
			e.logEvery(&e.forbiddenLog, "refused an event from inside another pane", "surface_id", surf.ID, "pid", pid, "why", err)
			return respErr[proto.ErrForbidden]
		}
	}
	if !e.quotas.take(surf.ID, size, now) {
		e.logEvery(&e.quotaLog, "a surface is over its event quota", "surface_id", surf.ID)
		return respErr[proto.ErrRateLimited]
	}
	rev := e.reducerEvent(req.Event, surf, now, runstate.SourceHook)
	if e.cfg.Hooks != nil {
		e.cfg.Hooks.HookEventSeen(surf.ID, req.Event.Provider, req.Event.Model)
	}
	o := e.submit(&pending{ev: &rev})
	switch {
	case o.code != "":
		return respErr[o.code]
	case o.err != nil:
		return respErr[proto.ErrStorageFailure]
	case o.inserted:
		return respInserted
	}
	return respDuplicate
}

// authorize finds the surface an event may be recorded for. Events of a
// provider with a router (Codex) are routed by session id (their
// capability and surfaceID are ignored); every other event needs the live
// capability of the surface it names.
func (e *Engine) authorize(ev *proto.Event, capToken string) (*Surface, string) {
	if r := e.routers[ev.Provider]; r != nil {
		if ev.SessionID == nil {
			return nil, ev.Provider + " event without a session id"
		}
		d, err := r.Route(*ev.SessionID, ev.HookName, e.routedPanes())
		if err != nil {
			return nil, err.Error()
		}
		s := e.surface(d.SurfaceID)
		if s == nil {
			return nil, "routed to a closed surface"
		}
		return s, ""
	}
	id := ev.SurfaceID.RawValue
	if id == "" || capToken == "" {
		return nil, "no surface or capability"
	}
	if !e.caps.Check(id, capToken) {
		return nil, "capability does not match the surface"
	}
	s := e.surface(id)
	if s == nil {
		return nil, "surface closed"
	}
	return s, ""
}

// maintain writes the runs snapshot every second while runs have changed
// or events were stored (their ids go with it), and prunes expired items
// and old runs every hour.
func (e *Engine) maintain(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	snap := time.NewTicker(time.Second)
	defer snap.Stop()
	for {
		select {
		case <-snap.C:
			if e.dirtyN.Load() > 0 || e.writer.Unflushed() > 0 {
				e.post(&pending{op: func(*runstate.Board) ([]runstate.Event, any, error) { return nil, nil, nil }})
			}
		case <-t.C:
			now := e.now()
			e.post(&pending{op: func(b *runstate.Board) ([]runstate.Event, any, error) {
				b.Prune(now)
				return nil, nil, nil
			}})
		case <-ctx.Done():
			return
		}
	}
}

// checkpoint moves the WAL into the database from a reader connection every
// checkpointEvery, instead of SQLite's automatic checkpoint, which runs
// inside whichever commit crosses 1000 pages and would stall the events
// waiting on that commit. The automatic checkpoint is restored on return.
func (e *Engine) checkpoint(ctx context.Context) {
	if _, err := e.store.W.ExecContext(ctx, `PRAGMA wal_autocheckpoint=0`); err != nil {
		e.log.Warn("turn off automatic checkpoints", "err", err)
		return
	}
	defer e.store.W.Exec(`PRAGMA wal_autocheckpoint=1000`)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	// An idle daemon must cost nothing: checkpoint only when the WAL has
	// changed since the last checkpoint (a stat is far cheaper than a query).
	var last os.FileInfo
	for {
		select {
		case <-t.C:
			st, err := os.Stat(e.store.Path + "-wal")
			if err == nil && last != nil && st.Size() == last.Size() && st.ModTime().Equal(last.ModTime()) {
				continue
			}
			last = st
			var busy, frames, done int
			if err := e.store.R.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &done); err != nil && ctx.Err() == nil {
				e.log.Warn("checkpoint", "err", err)
			}
		case <-ctx.Done():
			return
		}
	}
}

const checkpointEvery = 500 * time.Millisecond
