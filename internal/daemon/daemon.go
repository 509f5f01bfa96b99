// Package daemon owns Muster's background server: the control socket, the
// panes and their session records, and the wiring of the store, the event
// engine and the watchers. Run blocks until the daemon is told to stop.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
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
	// HostRelay dials the relays op host.call goes over (nil: it reaches
	// no host).
	HostRelay HostDialer

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
	// paneStarted runs when a launch's program runs, before its surface
	// is registered with the estimator.
	paneStarted func()
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
	// hostRelays carry op host.call (hostcall.go); nil without
	// Options.HostRelay.
	hostRelays *hostRelays

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

	// ln and evln are the listening sockets, which a restart keeps open
	// for the next image; restart is that restart once asked for, and
	// handoff how the last one into this image ended (handoff.go).
	ln, evln *net.UnixListener
	restart  *restartPlan
	handoff  *proto.HandoffReport
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
	// capability is the event capability in the pane's environment, and
	// hooksInjected whether its hooks came with the launch: a restart
	// hands both to the next daemon image (handoff.go).
	capability    string
	hooksInjected bool
	// continueAfterLimit sends the provider's continue once a usage
	// limit resets; continuedRun is the run it was sent for (limits.go).
	continueAfterLimit bool
	continuedRun       string
	// found is the limit a provider's LimitFinder found for the pane's
	// current run (limits.go), kept by the limit watcher.
	found foundLimit
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
	// An image started by a restart takes the panes its predecessor
	// froze; a state it cannot read goes back to that predecessor.
	h, err := takeHandoff(opts.Logger)
	if err != nil {
		return err
	}
	plan, err := run(ctx, opts, h)
	if plan != nil {
		return plan.exec(opts.Logger)
	}
	return err
}

// run is the daemon's life in this image; it returns the restart plan
// when a restart ends it, everything closed but the descriptors the next
// image takes.
func run(ctx context.Context, opts Options, h *handoff) (*restartPlan, error) {
	dirs := opts.Dirs
	if err := dirs.EnsureRuntime(); err != nil {
		return nil, h.refuse(err)
	}
	if err := dirs.EnsureState(); err != nil {
		return nil, h.refuse(err)
	}
	var lock *lockFile
	var err error
	if h != nil {
		lock = h.lock()
	} else if lock, err = acquireLock(dirs); err != nil {
		return nil, err
	}
	var plan *restartPlan
	defer func() {
		if plan == nil {
			lock.release()
		}
	}()
	ctx, stopSignals := handleSignals(ctx, opts.Logger)
	defer stopSignals()

	st, err := store.Open(ctx, dirs.Database())
	if err != nil {
		return nil, h.refuse(err)
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
		leftovers: newLeftovers(dirs.EventSocket()),
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
		Routers: sessionRouters(tenv), NotifyCommand: opts.NotifyCommand, Adopted: h.surfaces(),
		Senders: d.eventSenders(), Hooks: d, Panes: d,
	})
	if err != nil {
		return nil, err
	}
	d.events = eng
	if opts.HostRelay != nil {
		d.hostRelays = newHostRelays(opts.HostRelay)
	}
	if d.mux, err = d.routes(); err != nil {
		return nil, err
	}
	runs := engineRuns{eng}
	d.native = native.New(native.Config{
		Events: runs, Runs: runs, Listener: d,
		Logger: d.logger.With("component", "native"),
		Env:    tenv,
	})
	// The startup sweep runs before anything can read run state.
	if err := eng.Start(ctx); err != nil {
		return nil, err
	}
	defer eng.Close() // after every pane has closed: commits their last events
	if err := d.load(ctx, h.surfaceIDs()...); err != nil {
		return nil, err
	}
	var ln, evln *net.UnixListener
	if h != nil {
		d.adoptPanes(h)
		if ln, evln, err = h.listeners(); err != nil {
			return nil, err
		}
	} else {
		if evln, err = events.Listen(dirs.EventSocket()); err != nil {
			return nil, err
		}
		if ln, err = unixsock.Listen(dirs.ControlSocket()); err != nil {
			evln.Close()
			return nil, err
		}
	}
	d.ln, d.evln = ln, evln
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
		return nil, err
	}
	if plan = d.restartPlan(); plan != nil {
		plan.lock = lock
		d.logger.Info("daemon hands its panes to a new image", "executable", plan.executable, "panes", len(plan.panes))
		return plan, nil
	}
	d.logger.Info("daemon stopped")
	return nil, nil
}

// eventSenders returns events.Config.Senders: nil (everyone may) where
// processes cannot be read.
func (d *Daemon) eventSenders() events.SenderGate {
	if d.peers == nil {
		return nil
	}
	return d
}

// HookEventSeen learns of an authorized hook event (events.HookListener):
// the estimator stands down for its surface, and the model it named is
// shown.
func (d *Daemon) HookEventSeen(surfaceID, provider, model string) {
	if d.native != nil {
		d.native.HookEventSeen(surfaceID, provider)
	}
	d.onHookModel(surfaceID, model)
}

// ActivityChanged tells the watchers that a pane's activity changed
// (native.Listener).
func (d *Daemon) ActivityChanged(string, native.Activity) { d.stateChanged() }

// engineRuns is the event engine as the estimator records into and reads
// it (native.EventSink, native.RunBoard).
type engineRuns struct{ eng *events.Engine }

func (r engineRuns) Emit(ctx context.Context, ev proto.Event) error {
	_, err := r.eng.Emit(ctx, ev)
	return err
}

func (r engineRuns) CurrentRun(surfaceID string) native.CurrentRun {
	c, ok := r.eng.SurfaceCurrentRun(surfaceID)
	if !ok {
		return native.CurrentRun{}
	}
	return native.CurrentRun{RunID: c.RunID, State: c.State, Provider: c.Provider, StartedAt: c.StartedAt, Because: c.Because, Last: c.Last}
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
	g.Go(func() error { d.watchLimits(ctx); return nil })
	g.Go(func() error {
		d.leftovers.Watch(ctx, hookroute.DefaultWatch, d.livePanePIDs, func(pids []int) {
			d.logger.Info("ended shared agent processes no pane runs an agent for", "pids", pids)
		})
		return nil
	})
	// Keep the transcript history index fresh while the daemon runs. It is
	// the one goroutine whose failure does not stop the daemon: without it
	// panes, hooks and run states work on, and only history goes stale.
	// The index is a database of its own: its writes never hold the
	// connection that commits agent events.
	g.Go(func() error {
		log := d.logger.With("component", "history")
		idx, err := history.Open(ctx, d.dirs.HistoryDatabase(), d.opts.Version)
		if err != nil {
			log.Warn("open the transcript history index; history is not kept fresh", "err", err)
			return nil
		}
		defer idx.Close()
		if r := idx.Store().Recovered; r != nil {
			log.Warn("history index moved aside", "why", r.Why, "backup", r.Backup)
		}
		if err := history.Watch(ctx, idx, all.Sources(), tenv, log); err != nil && ctx.Err() == nil {
			log.Warn("transcript watcher stopped", "err", err)
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		if d.hostRelays != nil {
			d.hostRelays.close()
		}
		if d.restartPlan() != nil {
			d.handOver(ln)
			return nil
		}
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
func (d *Daemon) load(ctx context.Context, adopted ...string) error {
	if _, err := d.store.ExitOrphans(ctx, time.Now(), adopted...); err != nil {
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

// errClientGone ends a request whose client hung up.
var errClientGone = errors.New("the client hung up")

var errLineTooLong = errors.New("line too long")
