package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/capability"
	"github.com/musterhq/muster/internal/hookroute"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/runstate"
	"github.com/musterhq/muster/internal/store"
)

// Synthesized hook names (all under proto.ReservedHookPrefix).
const (
	HookStartupSweep  = "muster.startupSweep"
	HookSurfaceClosed = "muster.surfaceClosed"
)

// Resolver is how the engine learns about Muster sessions, which the daemon
// owns.
type Resolver interface {
	// SessionByName returns the id of the session with that name.
	SessionByName(name string) (id string, ok bool)
	// SessionName returns the current name of a session; ok is false once
	// the session no longer exists.
	SessionName(id string) (name string, ok bool)
}

// SessionLister is a Resolver that also lists every session, for a wait
// on any session at all (proto.WaitArgs with Any and no names).
type SessionLister interface {
	Sessions() []SessionRef
}

// SessionRef names a session.
type SessionRef struct{ ID, Name string }

// PaneResolver is a Resolver that also knows the sessions' panes: wait's
// `done` is satisfied by a pane that exited or is restorable, whatever its
// run state (a shell pane has none; an agent killed mid-turn may have
// been recorded disconnected, or not at all). state is one of
// proto.PaneLive, PaneExited, PaneRestorable, or "" when unknown;
// exitCode is set once the pane exited.
type PaneResolver interface {
	PaneOf(sessionID string) (state string, exitCode *int)
}

// Config configures an Engine. Store is required; zero fields take the
// documented defaults.
type Config struct {
	// Adopted are the surfaces a daemon restart handed over: their
	// programs run on, so the startup sweep leaves their runs alone.
	Adopted map[string]bool

	Store    *store.Store
	Logger   *slog.Logger     // default: discard
	Resolver Resolver         // needed by wait, explain and notification titles
	Now      func() time.Time // default: time.Now

	// Rules tunes the reducer (IdleAfter 2 min, LongRun 5 min, resolved
	// items visible 24 h, ended runs kept 7 days).
	Rules runstate.Rules

	// Routers route the events of the providers whose hooks may run
	// outside their pane (Codex), by session id; the daemon makes one per
	// provider.SessionRouter of the registry.
	Routers []*hookroute.Router

	// NotifyCommand runs for each new attention item. Arguments may hold
	// {title}, {body}, {session}, {reason} and {id}; when none does, the
	// title and body are appended. nil selects the default (notify-send on
	// Linux, osascript on macOS); an empty non-nil slice disables it.
	NotifyCommand []string

	ReadTimeout     time.Duration // whole-request budget on events.sock (500 ms)
	MaxConns        int           // events.sock connections open at once (1024, or a quarter of the file limit when lower)
	MaxConnsPerPeer int           // of them, from one process (64)
	// Quota bounds each surface's events (zero: DefaultQuota).
	Quota          Quota
	MaxFutureSkew  time.Duration      // how far occurredAt may lead the clock (1 min)
	EventRetention time.Duration      // stored events older than this are pruned at start (30 days)
	PeerAllowed    func(uid int) bool // default: the daemon's own uid only

	// Senders, when set, decides which processes may send events for a
	// session's surfaces (SenderGate). Nil: every process the capability
	// admits.
	Senders SenderGate
	// Hooks, when set, learns of every authorized provider hook event.
	Hooks HookListener
	// Panes, when set, tells explain what a session's live pane does.
	Panes PaneReporter

	// maxHold bounds how long the writer waits for concurrent clients'
	// events (defaultMaxHold; tests raise it).
	maxHold time.Duration
}

// SenderGate decides whether the process pid (SO_PEERCRED; 0 when
// unknown) may send events for a surface of session sessionID; an error
// refuses the event with ErrForbidden. It runs after the capability
// check, for every provider without a router. The daemon allows a process
// outside every pane or inside that session's pane (internal/panepeer).
type SenderGate interface {
	MayRecord(pid int, sessionID string) error
}

// HookListener learns of every authorized provider hook event (after
// Codex routing) before it is committed, and must not block: the native
// run estimator stands down for a surface once hooks report. model is
// what the event's payload named ("" for none).
type HookListener interface {
	HookEventSeen(surfaceID, provider, model string)
}

// PaneReporter is what explain shows of a session's live pane; each ok is
// false when the session has no live pane or nothing to say.
type PaneReporter interface {
	// PaneActivity is the pane's activity (internal/native).
	PaneActivity(sessionID string) (a proto.Activity, ok bool)
	// PaneCost is what the pane's process tree costs.
	PaneCost(sessionID string) (c proto.ProcessCost, ok bool)
	// PaneLimit says whether the session's run stopped at its limit.
	PaneLimit(sessionID string) (l proto.Limit, ok bool)
}

// Surface is a live pane as the engine knows it.
type Surface struct {
	ID         string   // MUSTER_SURFACE_ID
	SessionID  string   // the durable Muster session it hosts
	Provider   string   // claude, codex, …, or shell
	CWD        string   // launch directory
	PID        int      // the pane's process, once started
	LaunchArgs []string // argv as launched (Codex rule 3 reads `codex resume <id>`)
}

// Engine is the event engine. Create it with New, call Start before
// anything reads run state (it starts the writer), then run Serve; Close
// once Serve has returned and nothing submits events any more.
type Engine struct {
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	store   *store.Store
	caps    *capability.Set
	routers map[string]*hookroute.Router // by provider

	smu      sync.RWMutex
	surfaces map[string]*Surface

	mu      sync.RWMutex // board reads vs. commits; changed; removed
	board   *runstate.Board
	changed chan struct{}
	removed map[string]bool

	writer *store.EventWriter
	notes  chan runstate.Item

	qmu        sync.RWMutex // queue and closed; held for sending
	queue      chan *pending
	closed     bool
	writerDone chan struct{}
	started    atomic.Bool
	serving    atomic.Bool

	notifyWarned atomic.Bool
	batches      atomic.Int64
	committed    atomic.Int64
	held         atomic.Int64
	// dirtyN mirrors how many runs and items changed since the last
	// snapshot, for the maintenance goroutine.
	dirtyN atomic.Int64

	conns                                              *conns  // events.sock connections
	quotas                                             *quotas // per surface
	acceptLog, peerLog, capLog, quotaLog, forbiddenLog rateLog
}

// Stats are counters for benchmarks and diagnostics.
type Stats struct {
	Batches int64 // transactions committed
	Events  int64 // events recorded (inserted) in them
	Held    int64 // batches the writer waited on for more events
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	return Stats{Batches: e.batches.Load(), Events: e.committed.Load(), Held: e.held.Load()}
}

// New returns an engine; it starts no goroutines and reads nothing yet.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil {
		return nil, errors.New("new event engine: no store")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 500 * time.Millisecond
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = defaultMaxConns()
	}
	if cfg.MaxConnsPerPeer <= 0 {
		cfg.MaxConnsPerPeer = 64
	}
	if cfg.Quota == (Quota{}) {
		cfg.Quota = DefaultQuota
	}
	if cfg.maxHold <= 0 {
		cfg.maxHold = defaultMaxHold
	}
	if cfg.MaxFutureSkew <= 0 {
		cfg.MaxFutureSkew = time.Minute
	}
	if cfg.EventRetention <= 0 {
		cfg.EventRetention = 30 * 24 * time.Hour
	}
	if cfg.PeerAllowed == nil {
		me := os.Getuid()
		cfg.PeerAllowed = func(uid int) bool { return uid == me }
	}
	if cfg.NotifyCommand == nil {
		cfg.NotifyCommand = DefaultNotifyCommand(runtime.GOOS)
	}
	routers := map[string]*hookroute.Router{}
	for _, r := range cfg.Routers {
		routers[r.Provider()] = r
	}
	return &Engine{
		cfg:      cfg,
		log:      cfg.Logger,
		now:      cfg.Now,
		store:    cfg.Store,
		caps:     capability.NewSet(),
		routers:  routers,
		surfaces: map[string]*Surface{},
		board:    runstate.NewBoard(cfg.Rules),
		changed:  make(chan struct{}),
		removed:  map[string]bool{},
		notes:    make(chan runstate.Item, 64),
		conns:    newConns(cfg.MaxConns, cfg.MaxConnsPerPeer),
		quotas:   newQuotas(cfg.Quota),
	}, nil
}

// defaultMaxConns is 1024 connections, or a quarter of the file limit
// when that is lower, so that events.sock cannot use up the daemon's file
// descriptors.
func defaultMaxConns() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err == nil && rl.Cur > 0 && rl.Cur/4 < 1024 {
		return max(int(rl.Cur/4), 16)
	}
	return 1024
}

// ErrNotStarted is returned by calls that need Start first.
var ErrNotStarted = errors.New("the event engine has not started")

// Start loads the state the previous daemon left, prunes what expired, and
// records the startup sweep: a `disconnected` event (hookName
// muster.startupSweep) for every run left running, waitingInput or
// waitingApproval. Call it once, before anything reads run state.
func (e *Engine) Start(ctx context.Context) error {
	if e.started.Load() {
		return errors.New("start event engine: already started")
	}
	w, err := e.store.EventWriter(ctx)
	if err != nil {
		return fmt.Errorf("start event engine: %w", err)
	}
	e.writer = w
	runRows, err := e.store.LoadRuns(ctx)
	if err != nil {
		return fmt.Errorf("start event engine: %w", err)
	}
	itemRows, err := e.store.LoadAttention(ctx)
	if err != nil {
		return fmt.Errorf("start event engine: %w", err)
	}
	runs := make([]runstate.Run, 0, len(runRows))
	for _, rr := range runRows {
		var r runstate.Run
		if err := json.Unmarshal(rr.Data, &r); err != nil || r.RunID != rr.RunID || r.SessionID != rr.SessionID {
			e.log.Warn("skip unreadable stored run", "session_id", rr.SessionID, "run_id", rr.RunID, "err", err)
			continue
		}
		runs = append(runs, r)
	}
	items := make([]runstate.Item, 0, len(itemRows))
	for _, ir := range itemRows {
		items = append(items, itemFromRow(ir))
	}
	e.board.Load(runs, items)
	if err := e.replay(ctx); err != nil {
		return fmt.Errorf("start event engine: %w", err)
	}

	now := e.now()
	if n, err := e.store.PruneEvents(ctx, now.Add(-e.cfg.EventRetention)); err != nil {
		e.log.Warn("prune old events", "err", err)
	} else if n > 0 {
		e.log.Info("pruned old events", "count", n)
	}
	e.startWriter()
	swept := 0
	o := e.submit(&pending{op: func(b *runstate.Board) ([]runstate.Event, any, error) {
		b.Prune(now)
		var evs []runstate.Event
		for _, r := range b.Unfinished() {
			if e.cfg.Adopted[r.SurfaceID] {
				// Its pane was handed over by a restart and runs on.
				continue
			}
			evs = append(evs, synthesize(r, proto.KindDisconnected, HookStartupSweep, runstate.SourceSweep,
				"the previous daemon stopped while the run was "+string(r.State), now))
		}
		swept = len(evs)
		return evs, nil, nil
	}})
	if o.code != "" || o.err != nil {
		e.Close()
		return fmt.Errorf("start event engine: startup sweep: %w", errors.Join(o.err, errors.New(o.code)))
	}
	if swept > 0 {
		e.log.Info("startup sweep disconnected unfinished runs", "count", swept)
	}
	// The sweep's events are applied once committed; a snapshot now leaves
	// nothing to replay from this start.
	if err := e.Flush(ctx); err != nil {
		e.Close()
		return fmt.Errorf("start event engine: %w", err)
	}
	e.started.Store(true)
	return nil
}

// replay applies again the events stored after the runs snapshot (those of
// the last second or so before the previous daemon stopped): runs and
// attention items are derived from them exactly as when they arrived. What
// they change is written by the next snapshot (the startup sweep's).
func (e *Engine) replay(ctx context.Context) error {
	seq, err := e.store.SnapshotSeq(ctx)
	if err != nil {
		return err
	}
	rows, err := e.store.EventsAfter(ctx, seq)
	if err != nil || len(rows) == 0 {
		return err
	}
	for _, r := range rows {
		e.board.Apply(runstate.Event{
			ID: r.ID, RunID: r.RunID, SessionID: r.SessionID, SurfaceID: r.SurfaceID,
			NativeSessionID: r.NativeSessionID, Provider: r.Provider, Kind: proto.EventKind(r.Kind),
			HookName: r.HookName, Message: r.Message, OccurredAt: r.OccurredAt, ReceivedAt: r.ReceivedAt,
			Source: runstate.Source(r.Source),
		})
	}
	e.dirtyN.Store(int64(e.board.Dirty()))
	e.log.Info("replayed events after the runs snapshot", "count", len(rows))
	return nil
}

func synthesize(r runstate.Run, kind proto.EventKind, hook string, src runstate.Source, msg string, now time.Time) runstate.Event {
	return runstate.Event{
		ID: uuid.NewString(), RunID: r.RunID, SessionID: r.SessionID, SurfaceID: r.SurfaceID,
		NativeSessionID: r.NativeSessionID, Provider: r.Provider, Kind: kind, HookName: hook,
		Message: msg, OccurredAt: now, ReceivedAt: now, Source: src,
	}
}

// RegisterSurface records a new pane and returns its event capability, to
// put in the pane's MUSTER_EVENT_CAPABILITY. Only its hash is kept.
func (e *Engine) RegisterSurface(s Surface) (string, error) {
	if s.ID == "" || s.SessionID == "" {
		return "", errors.New("register surface: surface and session ids are required")
	}
	e.smu.Lock()
	defer e.smu.Unlock()
	if _, dup := e.surfaces[s.ID]; dup {
		return "", fmt.Errorf("register surface %s: already registered", s.ID)
	}
	tok, err := e.caps.Grant(s.ID)
	if err != nil {
		return "", fmt.Errorf("register surface %s: %w", s.ID, err)
	}
	c := s
	c.LaunchArgs = append([]string(nil), s.LaunchArgs...)
	e.surfaces[s.ID] = &c
	return tok, nil
}

// AdoptSurface records a pane a daemon restart handed over, with the
// capability its program already holds (see RegisterSurface).
func (e *Engine) AdoptSurface(s Surface, token string) error {
	if s.ID == "" || s.SessionID == "" {
		return errors.New("adopt surface: surface and session ids are required")
	}
	e.smu.Lock()
	defer e.smu.Unlock()
	if _, dup := e.surfaces[s.ID]; dup {
		return fmt.Errorf("adopt surface %s: already registered", s.ID)
	}
	if err := e.caps.Restore(s.ID, token); err != nil {
		return fmt.Errorf("adopt surface %s: %w", s.ID, err)
	}
	c := s
	c.LaunchArgs = append([]string(nil), s.LaunchArgs...)
	e.surfaces[s.ID] = &c
	return nil
}

// SurfaceStarted records the pid of a surface's process once it runs.
func (e *Engine) SurfaceStarted(id string, pid int) {
	e.smu.Lock()
	if s, ok := e.surfaces[id]; ok {
		s.PID = pid
	}
	e.smu.Unlock()
}

// CloseSurface revokes the surface's capability at once and ends its Codex
// binding; every run on the surface that had not ended then gets a
// synthesized `disconnected` event (muster.surfaceClosed), committed by
// the writer after this call returns.
func (e *Engine) CloseSurface(id string, exitCode *int) {
	e.caps.Revoke(id)
	e.quotas.forget(id)
	e.smu.Lock()
	_, known := e.surfaces[id]
	delete(e.surfaces, id)
	e.smu.Unlock()
	for _, r := range e.routers {
		r.PaneClosed(id)
	}
	if !known {
		return
	}
	msg := "the pane closed"
	if exitCode != nil {
		msg = fmt.Sprintf("the pane closed (exit status %d)", *exitCode)
	}
	e.post(&pending{op: func(b *runstate.Board) ([]runstate.Event, any, error) {
		now := e.now()
		var evs []runstate.Event
		for _, r := range b.RunsOnSurface(id) {
			evs = append(evs, synthesize(r, proto.KindDisconnected, HookSurfaceClosed, runstate.SourceSurface, msg, now))
		}
		return evs, nil, nil
	}})
}

// SessionRemoved tells the engine a session no longer exists: waiters on it
// end with "gone", and its runs and attention items are forgotten (its
// events stay in the log).
func (e *Engine) SessionRemoved(id string) {
	e.mu.Lock()
	e.removed[id] = true
	e.broadcastLocked()
	e.mu.Unlock()
	e.post(&pending{op: func(b *runstate.Board) ([]runstate.Event, any, error) {
		b.RemoveSession(id)
		return nil, nil, nil
	}})
}

// Emit records an event the daemon synthesized itself (native run
// estimation, the fusion rule). Its hookName must carry the reserved
// prefix, and its surface must be registered; the capability is not
// needed. Its source follows from the hook name (runstate.SourceOfHook).
func (e *Engine) Emit(ctx context.Context, ev proto.Event) (inserted bool, err error) {
	if !proto.ReservedHookName(ev.HookName) {
		return false, fmt.Errorf("emit event: hook name %q lacks the %s prefix", ev.HookName, proto.ReservedHookPrefix)
	}
	if !ev.Kind.Valid() || ev.ID.RawValue == "" || ev.RunID.RawValue == "" || ev.Provider == "" {
		return false, errors.New("emit event: invalid event")
	}
	surf := e.surface(ev.SurfaceID.RawValue)
	if surf == nil {
		return false, fmt.Errorf("emit event: unknown surface %q", ev.SurfaceID.RawValue)
	}
	rev := e.reducerEvent(ev, surf, e.now(), runstate.SourceOfHook(ev.HookName))
	o := e.submit(&pending{ev: &rev})
	if o.err != nil {
		return false, o.err
	}
	if o.code != "" {
		return false, fmt.Errorf("emit event: %s", o.code)
	}
	return o.inserted, nil
}

// Flush waits until everything submitted before it is committed, and writes
// the runs snapshot.
func (e *Engine) Flush(ctx context.Context) error {
	o := e.submit(&pending{op: func(*runstate.Board) ([]runstate.Event, any, error) { return nil, nil, nil }})
	if o.err == nil && o.code != "" {
		return errors.New(o.code)
	}
	return o.err
}

func (e *Engine) reducerEvent(ev proto.Event, surf *Surface, now time.Time, src runstate.Source) runstate.Event {
	native := ""
	if ev.SessionID != nil {
		native = *ev.SessionID
	}
	return runstate.Event{
		ID: ev.ID.RawValue, RunID: ev.RunID.RawValue, SessionID: surf.SessionID, SurfaceID: surf.ID,
		NativeSessionID: native, Provider: ev.Provider, Kind: ev.Kind, HookName: ev.HookName,
		Message: ev.Message, OccurredAt: ev.OccurredAt, ReceivedAt: now, Source: src,
	}
}

func (e *Engine) surface(id string) *Surface {
	e.smu.RLock()
	defer e.smu.RUnlock()
	return e.surfaces[id]
}

func (e *Engine) surfaceLive(id string) bool {
	e.smu.RLock()
	_, ok := e.surfaces[id]
	e.smu.RUnlock()
	return ok
}

func (e *Engine) routedPanes() []hookroute.Pane {
	e.smu.RLock()
	defer e.smu.RUnlock()
	out := make([]hookroute.Pane, 0, len(e.surfaces))
	for _, s := range e.surfaces {
		if s.PID > 0 {
			out = append(out, hookroute.Pane{SurfaceID: s.ID, PID: s.PID, CWD: s.CWD, LaunchArgs: s.LaunchArgs})
		}
	}
	return out
}

// Changed returns a channel that is closed at the board's next change: an
// event applied, an operation run, a session removed. Op "watch" takes it
// before reading the state it pushes, so that no change is missed.
func (e *Engine) Changed() <-chan struct{} {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.changed
}

// broadcastLocked wakes every waiter; e.mu must be held for writing.
func (e *Engine) broadcastLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// Summary is what `muster ls` shows of a session's run state.
type Summary struct {
	RunState        string // derived state; "" when no run is known
	RunID           string
	NativeSessionID string // the newest provider session id seen in events
	SurfaceID       string // the surface of the newest event
	Attention       int    // open attention items
	LastEventAt     time.Time
	// IdleAt is when RunState turns idle with no event (a run that ended
	// and went quiet); zero when no such change is due. Op "watch" wakes
	// then, since nothing else announces it.
	IdleAt time.Time
}

// SessionState summarizes a session for `muster ls`.
func (e *Engine) SessionState(sessionID string) Summary {
	now := e.now()
	e.mu.RLock()
	v := e.board.Session(sessionID, now)
	e.mu.RUnlock()
	s := Summary{
		RunState: string(v.State), RunID: v.Run.RunID, NativeSessionID: v.NativeSessionID,
		SurfaceID: v.SurfaceID, Attention: v.OpenItems, LastEventAt: v.LastEventAt,
	}
	if v.State != proto.StateIdle {
		s.IdleAt = v.IdleAt
	}
	return s
}

// Fill copies the summary into a `muster ls --json` row. It leaves the
// native session id and surface id alone when the row already has them.
func (s Summary) Fill(info *proto.SessionInfo) {
	if s.RunState != "" {
		st := s.RunState
		info.RunState = &st
	}
	if s.RunID != "" {
		id := s.RunID
		info.RunID = &id
	}
	if !s.LastEventAt.IsZero() {
		at := formatTime(s.LastEventAt)
		info.LastEventAt = &at
	}
	info.Attention = s.Attention
	if info.NativeSessionID == "" {
		info.NativeSessionID = s.NativeSessionID
	}
	if info.SurfaceID == "" {
		info.SurfaceID = s.SurfaceID
	}
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func itemFromRow(r store.AttentionRow) runstate.Item {
	return runstate.Item{
		ID: r.ID, SessionID: r.SessionID, SurfaceID: r.SurfaceID, RunID: r.RunID, Provider: r.Provider,
		Reason: proto.EventKind(r.Reason), Message: r.Message, EventID: r.EventID, OpenedAt: r.OpenedAt,
		ResolvedAt: r.ResolvedAt, Resolution: r.Resolution,
	}
}

func itemRow(it runstate.Item) store.AttentionRow {
	return store.AttentionRow{
		ID: it.ID, SessionID: it.SessionID, SurfaceID: it.SurfaceID, RunID: it.RunID, Provider: it.Provider,
		Reason: string(it.Reason), Message: it.Message, EventID: it.EventID, OpenedAt: it.OpenedAt,
		ResolvedAt: it.ResolvedAt, Resolution: it.Resolution,
	}
}

// SurfaceRun is the current run of a surface as the board has it: its id,
// its stored state (never idle), its provider and its start; zero when the surface
// has none. The fusion rule (internal/native) reads it.
func (e *Engine) SurfaceRun(surfaceID string) (runID string, state proto.RunState, provider string, startedAt time.Time) {
	now := e.now()
	e.mu.RLock()
	v := e.board.Surface(surfaceID, now)
	e.mu.RUnlock()
	if !v.HasRun {
		return "", "", "", time.Time{}
	}
	return v.Run.RunID, v.Run.State, v.Run.Provider, v.Run.StartedAt
}

// SurfaceCurrentRun is the surface's current run as the board has it,
// with the evidence behind its state; ok is false when it has none.
func (e *Engine) SurfaceCurrentRun(surfaceID string) (run runstate.Run, ok bool) {
	now := e.now()
	e.mu.RLock()
	v := e.board.Surface(surfaceID, now)
	e.mu.RUnlock()
	return v.Run, v.HasRun
}
