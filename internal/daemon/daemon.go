// Package daemon owns Muster's background server: the control socket, the
// panes and their session records, and the wiring of the store, the event
// engine and the watchers. Run blocks until the daemon is told to stop.
package daemon

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/musterhq/muster/internal/emulator"
	"github.com/musterhq/muster/internal/events"
	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/hookroute"
	"github.com/musterhq/muster/internal/native"
	"github.com/musterhq/muster/internal/pane"
	"github.com/musterhq/muster/internal/panepeer"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/transcript"
	"github.com/musterhq/muster/internal/unixsock"
)

// Options configure a daemon.
type Options struct {
	Dirs    paths.Dirs
	Logger  *slog.Logger
	Version string
	// Getenv reads the daemon's own environment (for MUSTER_HOME and
	// provider homes); tests inject their own.
	Getenv func(string) string
	// Term is the TERM value panes get.
	Term string
	// Scrollback is the emulator history of each pane, in lines.
	Scrollback int
	// WindowSize is the panes' window-size policy (pane.WindowLatest…).
	WindowSize string
	// ScrollbackBytes bounds each pane's history in bytes (0: 4 MiB);
	// ScrollbackTotalBytes bounds all panes' together (0: no bound).
	ScrollbackBytes      int
	ScrollbackTotalBytes int64
	// NotifyCommand runs for each new attention item (nil: the platform's
	// desktop notification).
	NotifyCommand []string
	// Notices receives the lines the user must see about the daemon's
	// start (a database moved aside); a daemon started on demand has its
	// stderr read by the client that started it. nil: the log only.
	Notices io.Writer
	// PanesPerPane and EmulatorCells are config.toml's [limits] (0: the
	// config package's defaults); quota.go applies them.
	PanesPerPane  int
	EmulatorCells int64
	// CostInterval is how often every pane's process tree is measured
	// (0: config.DefaultCostInterval; negative: never). MemoryCeiling
	// and SessionMemoryCeilings (by session name) are config.toml's
	// [cost] ceilings in bytes (cost.go).
	CostInterval          time.Duration
	MemoryCeiling         int64
	SessionMemoryCeilings map[string]int64
	// WorktreeDir is config.toml's worktree.dir ("": beside the repo).
	WorktreeDir string
	// ContinueAfterLimit is the default of NewArgs.ContinueAfterLimit;
	// LimitSkew how long after a limit's reset the continue goes (0:
	// config.DefaultLimitSkew; negative: none). limits.go.
	ContinueAfterLimit bool
	LimitSkew          time.Duration

	// hooks lets this package's tests reach into a running daemon.
	hooks *testHooks
}

// testHooks are set by tests only.
type testHooks struct {
	// listening runs once both sockets listen, before anything is served.
	listening func(d *Daemon, control, events *net.UnixListener)
	// echoTimeout replaces echoTimeout.
	echoTimeout time.Duration
	// renameWrite runs when a rename is about to write the store.
	renameWrite func()
	// resumeSettle replaces how long a resumed pane must live to count.
	resumeSettle time.Duration
	// recordingSurface runs when a launch is about to store its surface,
	// its program already running.
	recordingSurface func()
}

// Daemon is a running server.
type Daemon struct {
	opts      Options
	dirs      paths.Dirs
	logger    *slog.Logger
	store     *store.Store
	events    *events.Engine
	native    *native.Estimator
	startedAt time.Time
	// musterPath is the binary hook commands run.
	musterPath string

	mu       sync.Mutex
	sessions map[string]*session // by session id
	// ghosts are the surfaces of sessions killed during this daemon's
	// life, for placing processes that outlived their pane.
	ghosts map[string]ghost
	// leftovers are the shared agent processes (Codex's app-server daemon)
	// of closed panes, ended once no pane runs their agent.
	leftovers *hookroute.Leftovers
	// reserved are the names renames in flight are giving.
	reserved map[string]bool

	// peers places the processes on the other end of both sockets (see
	// peer.go); nil where the system offers no way to read other
	// processes.
	peers *panepeer.Cache
	ctl   *connTable
	// mux serves every op of proto.Ops but hello and attach.
	mux *proto.Mux

	stop context.CancelFunc
	// lock is daemon.lock, whose content says the daemon's phase.
	lock *lockFile
	// conns are the control connections' handlers; bg the goroutines that
	// record agent status events off the pane output path. Run waits for
	// both before it closes the engine and the store.
	conns    sync.WaitGroup
	bg       sync.WaitGroup
	shutting chan struct{}
	// watchers are the op "watch" streams, rung by stateChanged (watch.go).
	watchers outputBell
	// usage is what each surface's agent reported of its model and
	// context (usage.go).
	usage usageBoard
	// notices are the attached clients told of other sessions' new
	// attention items (notice.go).
	notices noticeBoard
	// costs are the last sample of each pane's process tree (cost.go).
	costs costBoard
	// worktrees are the git worktrees sessions run in (worktree.go).
	worktrees worktreeBoard
}

type session struct {
	rec     store.Session
	surface store.Surface
	pane    *pane.Pane // nil when no process runs for it in this daemon
	// renaming is set while a rename writes the store (one at a time).
	renaming bool
	// bell rings when the pane prints, for preview streams (preview.go).
	bell *outputBell
	// reserved is the cells a launch under way counts against the
	// emulator budget until its pane exists (quota.go).
	reserved int64
	// continueAfterLimit sends the provider's continue once a usage
	// limit resets; continuedRun is the run it was sent for (limits.go).
	continueAfterLimit bool
	continuedRun       string
}

// Run starts the daemon and blocks until ctx ends or a client asks it to
// stop. It refuses to start when another daemon owns the same home.
func Run(ctx context.Context, opts Options) error {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Term == "" {
		opts.Term = "xterm-256color"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	emulator.SetTotalScrollbackBytes(opts.ScrollbackTotalBytes)
	dirs := opts.Dirs
	if err := dirs.EnsureRuntime(); err != nil {
		return err
	}
	if err := dirs.EnsureState(); err != nil {
		return err
	}
	lock, err := acquireLock(dirs)
	if err != nil {
		return err
	}
	defer lock.release()
	ctx, stopSignals := handleSignals(ctx, opts.Logger)
	defer stopSignals()

	st, err := store.Open(ctx, dirs.Database())
	if err != nil {
		return err
	}
	defer st.Close()
	if r := st.Recovered; r != nil {
		opts.Logger.Warn("database moved aside", "why", r.Why, "backup", r.Backup)
		if opts.Notices != nil {
			fmt.Fprintln(opts.Notices, "muster: "+r.Notice())
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d := &Daemon{
		opts: opts, dirs: dirs, logger: opts.Logger, store: st,
		startedAt: time.Now(), sessions: map[string]*session{}, ghosts: map[string]ghost{}, reserved: map[string]bool{},
		leftovers: newLeftovers(),
		stop:      cancel, shutting: make(chan struct{}), lock: lock,
		ctl: newConnTable(controlConnLimit(), maxControlConnsPerPID),
	}
	if procs := panepeer.System(); procs != nil {
		d.peers = panepeer.NewCache(procs)
	} else {
		d.logger.Warn("cannot read other processes here: processes inside panes are not told apart from others on control.sock and events.sock")
	}
	if exe, err := paths.StableExecutable(dirs.State); err == nil {
		d.musterPath = exe
	} else {
		d.logger.Warn("find a stable muster binary for hooks", "err", err)
		d.musterPath = exe
	}
	home := opts.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	tenv := transcript.Env{Home: home, Getenv: opts.Getenv}
	quota, err := events.ParseQuota(opts.Getenv("MUSTER_EVENT_QUOTA"))
	if err != nil {
		d.logger.Warn("event quota ignored", "err", err)
	}
	eng, err := events.New(events.Config{
		Store: st, Logger: d.logger.With("component", "events"), Resolver: d, Quota: quota,
		Routers: sessionRouters(tenv), NotifyCommand: opts.NotifyCommand,
		MayRecord: d.eventsMayRecord(),
		OnHookEvent: func(surfaceID, provider, model string) {
			if d.native != nil {
				d.native.HookEventSeen(surfaceID, provider)
			}
			d.onHookModel(surfaceID, model)
		},
		Activity: d.activityOf,
		Cost:     d.costOf,
		Limit:    d.sessionLimit,
	})
	if err != nil {
		return err
	}
	d.events = eng
	if d.mux, err = d.routes(); err != nil {
		return err
	}
	d.native = native.New(native.Config{
		Emit: func(ctx context.Context, ev proto.Event) error {
			_, err := eng.Emit(ctx, ev)
			return err
		},
		Logger: d.logger.With("component", "native"),
		Env:    tenv,
		CurrentRun: func(surfaceID string) native.CurrentRun {
			r, ok := eng.SurfaceCurrentRun(surfaceID)
			if !ok {
				return native.CurrentRun{}
			}
			return native.CurrentRun{RunID: r.RunID, State: r.State, Provider: r.Provider, StartedAt: r.StartedAt, Because: r.Because, Last: r.Last}
		},
		OnNativeID:  d.onNativeID,
		OnAttention: d.onAttention,
		OnActivity:  func(string, native.Activity) { d.stateChanged() },
		OnUsage:     d.onUsage,
	})
	// The startup sweep runs before anything can read run state.
	if err := eng.Start(ctx); err != nil {
		return err
	}
	defer eng.Close() // after every pane has closed: commits their last events
	if err := d.load(ctx); err != nil {
		return err
	}
	evln, err := events.Listen(dirs.EventSocket())
	if err != nil {
		return err
	}
	ln, err := unixsock.Listen(dirs.ControlSocket())
	if err != nil {
		evln.Close()
		return err
	}
	if h := opts.hooks; h != nil && h.listening != nil {
		h.listening(d, ln, evln)
	}
	lock.setPhase(paths.PhaseReady)
	d.logger.Info("daemon started", "pid", os.Getpid(), "home", dirs.State)
	err = d.serve(ctx, ln, evln, tenv)
	// Agent status events still being recorded go in before the engine
	// and the store close (deferred above).
	d.bg.Wait()
	if err != nil {
		d.logger.Error("daemon stopped", "err", err)
		return err
	}
	d.logger.Info("daemon stopped")
	return nil
}

// serve runs the daemon's goroutines under one errgroup until ctx ends, a
// client asks it to stop, or one of them fails: a listener or the engine
// that dies stops the daemon with its error rather than leaving it up
// with a dead socket. It returns once every goroutine has, every pane is
// closed and every control connection is done.
func (d *Daemon) serve(ctx context.Context, ln, evln *net.UnixListener, tenv transcript.Env) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := d.events.Serve(ctx, evln)
		if err == nil && ctx.Err() == nil {
			// The engine ends quietly when its listener closes.
			err = net.ErrClosed
		}
		if err != nil {
			return fmt.Errorf("events.sock: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		if err := d.native.Run(ctx); err != nil {
			return fmt.Errorf("native run estimator: %w", err)
		}
		return nil
	})
	g.Go(func() error { return d.serveControl(ctx, ln) })
	g.Go(func() error { d.announceAttention(ctx); return nil })
	g.Go(func() error { d.sampleCosts(ctx); return nil })
	g.Go(func() error { d.watchWorktrees(ctx); return nil })
	g.Go(func() error { d.continueAtLimits(ctx); return nil })
	g.Go(func() error {
		d.leftovers.Watch(ctx, hookroute.DefaultWatch, d.livePanePIDs, func(pids []int) {
			d.logger.Info("ended shared agent processes no pane runs an agent for", "pids", pids)
		})
		return nil
	})
	// Keep the transcript history index fresh while the daemon runs. It is
	// the one goroutine whose failure does not stop the daemon: without it
	// panes, hooks and run states work on, and only history goes stale.
	g.Go(func() error {
		idx := history.New(d.store, d.opts.Version)
		if err := history.Watch(ctx, idx, all.Sources(), tenv, d.logger.With("component", "history")); err != nil && ctx.Err() == nil {
			d.logger.Warn("transcript watcher stopped", "err", err)
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		d.lock.setPhase(paths.PhaseStopping)
		close(d.shutting)
		ln.Close()
		d.closeAllPanes()
		d.conns.Wait()
		// A new that raced the shutdown may have started a pane since.
		d.closeAllPanes()
		return nil
	})
	return g.Wait()
}

// load reads the session records a previous daemon left. Their processes
// died with it, so surfaces still marked running become exited.
func (d *Daemon) load(ctx context.Context) error {
	if _, err := d.store.ExitOrphans(ctx, time.Now()); err != nil {
		return err
	}
	recs, err := d.store.Sessions(ctx)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		s := &session{rec: rec}
		if su, err := d.store.LatestSurface(ctx, rec.ID); err == nil {
			s.surface = su
		}
		s.continueAfterLimit = d.opts.ContinueAfterLimit
		d.sessions[rec.ID] = s
	}
	return d.loadWorktrees(ctx)
}

func (d *Daemon) closeAllPanes() {
	d.mu.Lock()
	var panes []*pane.Pane
	for _, s := range d.sessions {
		if s.pane != nil {
			panes = append(panes, s.pane)
		}
	}
	d.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range panes {
		d.leftovers.PaneClosing(p.PID())
		wg.Go(func() { p.Close(2 * time.Second) })
	}
	wg.Wait()
	if ended := d.leftovers.Reap(nil); len(ended) > 0 {
		d.logger.Info("ended shared agent processes of the closed panes", "pids", ended)
	}
}

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
	// the frozen ops are served.
	hello := false
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
			hello = true
			if rep.ok(res) != nil {
				return
			}
			continue
		case proto.Frames:
			d.attach(rctx, conn, br, req.Args, passed.take)
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

// errClientGone ends a request whose client hung up.
var errClientGone = errors.New("the client hung up")

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

// hello answers the version exchange: the client's protocol must be ours.
func (d *Daemon) hello(raw json.RawMessage, pid int) (proto.HelloResult, error) {
	var h proto.Hello
	if err := proto.DecodeArgs(raw, &h); err != nil {
		return proto.HelloResult{}, err
	}
	if h.Protocol != proto.ControlVersion {
		d.logger.Info("control client of another protocol", "pid", pid, "protocol", h.Protocol, "version", h.Version)
		return proto.HelloResult{}, proto.VersionMismatch(d.opts.Version, proto.ControlVersion, h.Version, h.Protocol)
	}
	return proto.HelloResult{Protocol: proto.ControlVersion, Version: d.opts.Version, PID: os.Getpid()}, nil
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

// SessionByName resolves a name (or id, or unique id prefix) for the event
// engine.
func (d *Daemon) SessionByName(name string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, err := d.lookupLocked(name)
	if err != nil {
		return "", false
	}
	return s.rec.ID, true
}

// SessionName returns a session's current name for the event engine.
func (d *Daemon) SessionName(id string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.sessions[id]
	if !ok {
		return "", false
	}
	return s.rec.Name, true
}

var errLineTooLong = errors.New("line too long")

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
	proto.Handle(m, proto.OpStatus, func(context.Context, proto.None) (proto.DaemonStatus, error) {
		return d.status(), nil
	})
	proto.Handle(m, proto.OpStop, func(context.Context, proto.None) (proto.None, error) {
		d.logger.Info("stop requested")
		d.stop()
		return proto.None{}, nil
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
	d.events.RegisterControl(m)
	if missing := m.Missing(); len(missing) > 0 {
		return nil, fmt.Errorf("control ops without a handler: %v", missing)
	}
	return m, nil
}

func (d *Daemon) status() proto.DaemonStatus {
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
		Protocol: proto.ControlVersion,
	}
}

// lookup finds a session by name, id, or unique id prefix; d.mu is held.
func (d *Daemon) lookupLocked(name string) (*session, error) {
	if name == "" {
		return nil, proto.Errorf(proto.CodeBadRequest, "no session name given")
	}
	for _, s := range d.sessions {
		if s.rec.Name == name || s.rec.ID == name {
			return s, nil
		}
	}
	var found *session
	for _, s := range d.sessions {
		if len(name) >= 4 && strings.HasPrefix(s.rec.ID, name) {
			if found != nil {
				return nil, proto.Errorf(proto.CodeConflict, "%q matches more than one session id", name)
			}
			found = s
		}
	}
	if found == nil {
		return nil, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("no session named %q", name), Hint: d.unknownNameHintLocked(name)}
	}
	return found, nil
}

func (d *Daemon) list() []proto.SessionInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	ss := make([]*session, 0, len(d.sessions))
	for _, s := range d.sessions {
		ss = append(ss, s)
	}
	// By creation to the nanosecond: SessionInfo's time has seconds, and
	// two sessions started in one second kept their names' order.
	slices.SortFunc(ss, func(a, b *session) int {
		return cmp.Or(a.rec.CreatedAt.Compare(b.rec.CreatedAt), strings.Compare(a.rec.Name, b.rec.Name))
	})
	out := make([]proto.SessionInfo, 0, len(ss))
	for _, s := range ss {
		out = append(out, d.infoLocked(s))
	}
	return out
}

func (d *Daemon) infoLocked(s *session) proto.SessionInfo {
	info := proto.SessionInfo{
		ID: s.rec.ID, Name: s.rec.Name, Provider: s.rec.Provider, CWD: s.rec.CWD,
		CreatedAt:       s.rec.CreatedAt.UTC().Format(time.RFC3339),
		Command:         displayCommand(s),
		SurfaceID:       s.surface.ID,
		State:           "exited",
		ExitCode:        s.surface.ExitCode,
		NativeSessionID: s.rec.NativeID,
		NativeConfirmed: s.rec.NativeConfirmed,
		Reason:          s.rec.RestoreReason,
		Control:         s.rec.Control,
	}
	if s.pane != nil {
		info.PID = s.pane.PID()
		info.Title = s.pane.Title()
		if exited, code := s.pane.Exited(); exited {
			info.ExitCode = &code
		} else {
			info.State = "running"
			info.ExitCode = nil
		}
	} else {
		info.PID = s.surface.PID
	}
	if d.events != nil {
		d.events.SessionState(s.rec.ID).Fill(&info)
	}
	if d.native != nil && info.State == "running" {
		a := d.native.Activity(s.surface.ID)
		info.Activity = a.State
		info.ActivityEvidence = a.Evidence
		if a.State == native.Working {
			info.ActivityPercent = a.Percent
		}
		if !a.Since.IsZero() {
			at := a.Since.UTC().Format(time.RFC3339Nano)
			info.ActivitySince = &at
		}
	}
	d.usage.fill(s.surface.ID, &info)
	d.worktrees.fill(s.rec.ID, &info)
	d.fillLimit(s.surface.ID, &info)
	info.ContinueAfterLimit = s.continueAfterLimit
	if info.State == "running" {
		d.costs.fill(s.surface.ID, &info)
		info.MemoryCeiling = d.memoryCeiling(s.rec.Name)
	}
	if s.pane == nil {
		if restorable(s) {
			info.State = "restorable"
			if info.Reason == "" {
				if s.surface.EndReason == "daemon-died" {
					info.Reason = "the daemon died; `muster resume " + s.rec.Name + "` brings it back"
				} else {
					info.Reason = "the daemon stopped; `muster resume " + s.rec.Name + "` brings it back"
				}
			}
		}
	}
	info.Pane = proto.PaneWord(info.State)
	info.Status = info.StatusWord()
	return info
}

func displayCommand(s *session) string {
	if s.rec.ShellCommand != "" {
		return s.rec.ShellCommand
	}
	return strings.Join(s.surface.Argv, " ")
}

func (d *Daemon) send(ctx context.Context, peer func() panepeer.Where, a proto.SendArgs) error {
	p0 := peer()
	d.mu.Lock()
	s, err := d.lookupLocked(a.Name)
	if err == nil {
		err = d.mayDriveLocked(p0, s)
	}
	if err != nil {
		d.mu.Unlock()
		return err
	}
	p, surfaceID := s.pane, s.surface.ID
	d.mu.Unlock()
	if p == nil {
		return proto.Errorf(proto.CodeExited, "session %q is not running", s.rec.Name)
	}
	_, agent := all.Launch(s.rec.Provider)
	var echo *echoWatch
	if agent && a.Enter && a.Text != "" {
		echo = newEchoWatch(func() (string, error) {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			return p.Capture(ctx, 0, false)
		}, a.Text)
	}
	if a.Text != "" {
		// The key is evidence before the agent can answer it: observed
		// after the write, an agent's fast reaction (its working status)
		// could be fused first, and the key's answer then looked
		// unconfirmed.
		d.native.Input(surfaceID, []byte(a.Text))
		if err := p.Write([]byte(a.Text)); err != nil {
			return proto.Errorf(proto.CodeExited, "session %q: %v", s.rec.Name, err)
		}
	}
	if a.Enter {
		if a.Text != "" {
			// TUIs that see text and CR in one read treat the CR as part of
			// a paste; a separate, later write makes it a key press. Agent
			// TUIs need longer (Codex 0.169 still reads a CR 100 ms after
			// the text as pasted), and only once they have read the text:
			// see echoWatch. A client that hangs up meanwhile gets no Enter.
			pause := 30 * time.Millisecond
			if echo != nil {
				echo.wait(ctx, d.echoTimeout())
				pause = 300 * time.Millisecond
			}
			if err := sleep(ctx, pause); err != nil {
				return err
			}
		}
		d.native.Input(surfaceID, []byte("\r"))
		if err := p.Write([]byte("\r")); err != nil {
			return proto.Errorf(proto.CodeExited, "session %q: %v", s.rec.Name, err)
		}
	}
	return nil
}

// echoTimeout bounds the wait for an agent's echo in send.
func (d *Daemon) echoTimeout() time.Duration {
	if h := d.opts.hooks; h != nil && h.echoTimeout > 0 {
		return h.echoTimeout
	}
	return echoTimeout
}

// resumeSettle is how long a resumed pane must live for its resume to
// count: one that dies sooner (a stale id, a broken install) is reported.
func (d *Daemon) resumeSettle() time.Duration {
	if h := d.opts.hooks; h != nil && h.resumeSettle > 0 {
		return h.resumeSettle
	}
	return 1500 * time.Millisecond
}

// sleep waits for d, or returns ctx's error when it ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (d *Daemon) capture(ctx context.Context, peer func() panepeer.Where, a proto.CaptureArgs) (proto.CaptureResult, error) {
	if a.Scrollback < 0 {
		return proto.CaptureResult{}, proto.Errorf(proto.CodeBadRequest, "scrollback must not be negative")
	}
	p0 := peer()
	d.mu.Lock()
	s, err := d.lookupLocked(a.Name)
	if err == nil {
		err = d.mayDriveLocked(p0, s)
	}
	if err != nil {
		d.mu.Unlock()
		return proto.CaptureResult{}, err
	}
	p, final := s.pane, s.surface.FinalScreen
	d.mu.Unlock()
	if p == nil {
		return proto.CaptureResult{Text: final}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	text, err := p.Capture(ctx, a.Scrollback, a.ANSI)
	if err != nil {
		return proto.CaptureResult{}, proto.Errorf(proto.CodeInternal, "capture %s: %v", s.rec.Name, err)
	}
	return proto.CaptureResult{Text: text}, nil
}

func (d *Daemon) kill(ctx context.Context, peer func() panepeer.Where, name string) error {
	p0 := peer()
	d.mu.Lock()
	s, err := d.lookupLocked(name)
	if err == nil {
		err = d.mayDriveLocked(p0, s)
	}
	if err != nil {
		d.mu.Unlock()
		return err
	}
	p := s.pane
	if s.surface.ID != "" {
		// Processes that outlive the pane are still known to come from it.
		d.ghosts[s.surface.ID] = ghost{sessionID: s.rec.ID, name: s.rec.Name}
	}
	d.mu.Unlock()
	if p != nil {
		d.leftovers.PaneClosing(p.PID())
		p.Close(2 * time.Second)
	}
	if err := d.store.DeleteSession(ctx, s.rec.ID); err != nil {
		return proto.Errorf(proto.CodeInternal, "remove session %s: %v", s.rec.Name, err)
	}
	d.mu.Lock()
	delete(d.sessions, s.rec.ID)
	d.mu.Unlock()
	d.events.SessionRemoved(s.rec.ID)
	d.logger.Info("session killed", "session_id", s.rec.ID)
	if ended := d.leftovers.Reap(d.livePanePIDs()); len(ended) > 0 {
		d.logger.Info("ended shared agent processes no pane uses", "pids", ended)
	}
	return nil
}

// rename writes the store without d.mu, which the pane output path takes,
// and swaps the name in memory afterwards. The new name is reserved while
// the write runs, so that no new session or other rename takes it.
func (d *Daemon) rename(ctx context.Context, peer func() panepeer.Where, a proto.RenameArgs) error {
	if err := validateName(a.NewName); err != nil {
		return err
	}
	p0 := peer()
	d.mu.Lock()
	s, err := d.lookupLocked(a.Name)
	if err == nil {
		err = d.mayDriveLocked(p0, s)
	}
	if err == nil && s.rec.Name != a.NewName && d.nameTakenLocked(a.NewName) {
		err = proto.Errorf(proto.CodeConflict, "a session named %q already exists", a.NewName)
	}
	if err == nil && s.renaming {
		err = proto.Errorf(proto.CodeConflict, "session %q is being renamed", s.rec.Name)
	}
	if err != nil {
		d.mu.Unlock()
		return err
	}
	s.renaming = true
	d.reserved[a.NewName] = true
	id := s.rec.ID
	d.mu.Unlock()
	if h := d.opts.hooks; h != nil && h.renameWrite != nil {
		h.renameWrite()
	}
	err = d.store.RenameSession(ctx, id, a.NewName)
	d.mu.Lock()
	defer d.mu.Unlock()
	s.renaming = false
	delete(d.reserved, a.NewName)
	switch {
	case errors.Is(err, store.ErrNameTaken):
		return proto.Errorf(proto.CodeConflict, "a session named %q already exists", a.NewName)
	case err != nil:
		return proto.Errorf(proto.CodeInternal, "rename: %v", err)
	case d.sessions[id] != s:
		// Killed while the store was written: its row is gone too.
		return proto.Errorf(proto.CodeNotFound, "session %q was killed while being renamed", s.rec.Name)
	}
	s.rec.Name = a.NewName
	d.stateChanged()
	return nil
}

// nameTakenLocked reports whether a session has name, or a rename in
// flight is giving it to one. d.mu is held.
func (d *Daemon) nameTakenLocked(name string) bool {
	if d.reserved[name] {
		return true
	}
	for _, s := range d.sessions {
		if s.rec.Name == name {
			return true
		}
	}
	return false
}

func validateName(name string) error {
	if name == "" {
		return proto.Errorf(proto.CodeInvalid, "session name must not be empty")
	}
	if len(name) > 64 {
		return proto.Errorf(proto.CodeInvalid, "session name %q is longer than 64 bytes", name)
	}
	if strings.HasPrefix(name, "-") {
		return proto.Errorf(proto.CodeInvalid, "session name %q must not start with '-'", name)
	}
	for _, r := range name {
		if r <= ' ' || r == 0x7f || r == '/' || r == ':' {
			return proto.Errorf(proto.CodeInvalid, "session name %q may not contain spaces, control characters, '/' or ':'", name)
		}
	}
	return nil
}
