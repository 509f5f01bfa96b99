package native

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/fsnotify/fsnotify"
	"github.com/google/uuid"

	"github.com/musterhq/muster/internal/hookevent"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/runstate"
	"github.com/musterhq/muster/internal/termsignal"
	"github.com/musterhq/muster/internal/transcript"
)

// Hook names of the events the estimator synthesizes (DESIGN §4).
const (
	HookLaunchObserved  = proto.ReservedHookPrefix + "native.launchObserved"
	HookCommandFinished = proto.ReservedHookPrefix + "native.commandFinished"
	HookProcessExited   = proto.ReservedHookPrefix + "native.processExited"
	HookTurnStarted     = proto.ReservedHookPrefix + "native.turnStarted"
	HookTurnCompleted   = proto.ReservedHookPrefix + "native.turnCompleted"
	// HookHooksTookOver ends a coarse run that was open when the provider's
	// hooks started reporting for the surface.
	HookHooksTookOver = proto.ReservedHookPrefix + "native.hooksTookOver"
	// HookTerminalTurnEnded ends a hook-less agent's coarse run when its
	// terminal says the turn is over (working, then waiting).
	HookTerminalTurnEnded = proto.ReservedHookPrefix + "terminal.turnEnded"
	// HookTerminalRequest is a hook-less agent's approval or question, as
	// its terminal says (provider.RequestReader).
	HookTerminalRequest = proto.ReservedHookPrefix + "terminal.request"
)

// Defaults of Config.
const (
	DefaultPoll         = time.Second
	DefaultBellInterval = time.Second
	// DefaultAttentionInterval rate-limits OnAttention per pane: programs
	// that loop on notifications must not flood the attention drawer or the
	// notification command.
	DefaultAttentionInterval = 2 * time.Second
)

const (
	emitTimeout = 10 * time.Second
	// cutoffSlack widens the window before a launch was observed in which a
	// transcript record still belongs to it (the launch is seen up to one
	// poll late, and a prompt given on the command line is written at once).
	cutoffSlack = 5 * time.Second
	maxSeen     = 256 // turn keys remembered per agent run
	// exitGrace is how long an agent may be gone before its run ends
	// without the shell's OSC 133 D (at least one poll): the shell prints
	// D when it gets the terminal back, a moment after the job ended.
	exitGrace = 2 * time.Second
	// workGrace is how long an idle turn reader's agent must report work,
	// with no transcript followed, before its coarse run opens.
	workGrace = 3 * time.Second
	// writeGap bounds how often transcript writes wake the poll loop.
	writeGap = 100 * time.Millisecond
)

// nativeNS is the UUIDv5 namespace of the coarse run ids and of every event
// id the estimator derives. Turn run ids come from hookevent.TurnRunID.
var nativeNS = uuid.MustParse("6b0f3c2e-5d1a-4e8b-9c47-2a9e1f6d8b35")

// Config is what the daemon gives the estimator.
type Config struct {
	// Emit records a synthesized event (events.Engine.Emit, dropping its
	// inserted result). It is called from Run's goroutine and from
	// SurfaceExited, never from Signals. Nil: only activity is tracked.
	Emit func(ctx context.Context, ev proto.Event) error
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger; discards when nil.
	Logger *slog.Logger
	// OnNativeID, when set, gets the provider session id of a surface's
	// agent once the estimator follows that session's transcript by its
	// id: the id its own processes prove (provider.ProcessSessionReader) or
	// the one assigned at launch, now on disk. The daemon records it, so
	// that a session whose hooks never ran is resumed in its conversation.
	// It is called from Run's goroutine, once per id: it must not block.
	OnNativeID func(surfaceID, provider, nativeID string)
	// Env locates the providers' homes (transcripts).
	Env transcript.Env
	// Poll is the interval of Run's loop; DefaultPoll when zero.
	Poll time.Duration
	// BellInterval debounces bells: a bell within it of the last one that
	// counted is ignored. DefaultBellInterval when zero.
	BellInterval time.Duration
	// OnActivity, when set, is called after a surface's Activity changed,
	// on the goroutine that changed it (often the pane's reader): it must
	// not block.
	OnActivity func(surfaceID string, a Activity)
	// CurrentRun returns a surface's current run as the run-state board
	// has it (the zero CurrentRun when none), for the fusion rule and for
	// the end of a coarse run that fused evidence already ended. It is
	// called from Run's goroutines. Nil: keys are not read.
	CurrentRun func(surfaceID string) CurrentRun
	// OnAttention, when set, is called for a notification or a bell (past
	// the bell limiter) of a pane, at most once per AttentionInterval per
	// pane (later ones within it are dropped; the activity still shows
	// them), on the pane's reader goroutine: it must not block.
	OnAttention func(surfaceID string, r AttentionRequest)
	// AttentionInterval: DefaultAttentionInterval when zero.
	AttentionInterval time.Duration
	// OnUsage, when set, gets what the tracked agent's transcript reports
	// of its model and context (provider.TurnUsage records, history
	// included: the latest is the current context), and the zero Usage
	// when the agent leaves the foreground. It is called from Run's
	// goroutine and from SurfaceExited: it must not block.
	OnUsage func(surfaceID string, u provider.Usage)
}

// Surface is one live pane as the estimator needs it.
type Surface struct {
	ID        string // MUSTER_SURFACE_ID
	SessionID string // the Muster session (for logs)
	// Provider is the session's provider: a built-in one for a first-class
	// launch (its runs are estimated even if the executable has another
	// name), "shell" or "custom" otherwise (any built-in agent started in
	// the pane is recognised by its executable).
	Provider string
	PID      int    // the pane's process (the agent itself, or the shell)
	CWD      string // the pane's starting directory
	// ForegroundPGID returns the pane's foreground process group
	// (pane.Pane.ForegroundPGID: TIOCGPGRP on the PTY master). Nil: no
	// run estimation, only activity.
	ForegroundPGID func() (int, error)
	// NativeID returns the provider session id captured for the session
	// (`muster hook capture`, or the id assigned at launch), "" when none.
	// May be nil.
	NativeID func() string
	// HooksInjected reports that the launch itself carries the provider's
	// hooks (claude --settings): the estimator never reports runs for it.
	HooksInjected bool
	// Started is when the pane's process started: a transcript record
	// older than that is not its agent's, however recent (a resume right
	// after a turn: `muster daemon stop; muster resume`). Zero: unknown.
	Started time.Time
}

// Estimator derives activity and native run estimates for every live pane.
// Its methods are safe for concurrent use.
type Estimator struct {
	cfg  Config
	log  *slog.Logger
	now  func() time.Time
	poll time.Duration
	exes map[string]string

	// Process inspection, replaced by tests.
	inspect func(pid int) (procInfo, error)
	alive   func(pgid int) bool
	cwdOf   func(pid int) string
	treeOf  func(root, max int) []int

	mu       sync.RWMutex
	surfaces map[string]*surface
	claims   map[string]string // transcript path → surface id following it
	dirs     map[string]string // surface id → provider and directory of its tracked agent

	running atomic.Bool
	wake    chan struct{}
	// files watches the transcripts followed, so that a record wakes the
	// poll loop at once instead of at the next poll. It is made when Run
	// first follows a transcript (wmu guards that, with Run's context and
	// goroutines, wctx and wg, which its loop joins), and stays nil
	// without Run or when the system gives none: the poll still reads
	// the transcripts.
	files atomic.Pointer[fsnotify.Watcher]
	wmu   sync.Mutex
	wctx  context.Context
	wg    *sync.WaitGroup
	// fastUntil (Unix ns): until then Run polls every fastPoll, because a
	// key answered a dialog and the transcript will say how (a denial).
	fastUntil atomic.Int64
	fuse      chan fused // evidence for the fusion goroutine
	// Owned by the fusion goroutine: keys held for a late hook, and
	// answers waiting for confirmation, by surface.
	held    map[string]fused
	answers map[string]pendingAnswer
}

// surface is the estimator's state of one pane.
type surface struct {
	Surface
	log        *slog.Logger
	firstClass string // Provider when it is a built-in launchable provider

	// sig guards what the pane's reader goroutine touches (Signals).
	sig       sync.Mutex
	act       activityTracker
	agentProv string // the provider whose title fallbacks apply
	tracking  bool   // an agent is in the foreground: a D mark wakes the loop
	dSeq      uint64 // OSC 133/633 D marks seen
	dCode     int    // the exit code of the last one (-1: none given)
	oscCwd    string // the last OSC 7 directory
	hooked    map[string]bool
	lastAsk   time.Time // the last request passed to OnAttention
	asked     bool
	// askedBell: that request was a bell. A notification right after
	// one passes the rate limit once: its text is what the item should
	// say, where the bell only said "bell".
	askedBell bool
	// idleAt is when the activity last went from working (or attention)
	// to waiting, by idleSig: the agent's terminal saying its turn is
	// over, which ends a coarse run with idleKind.
	idleAt   time.Time
	idleSig  string
	idleKind proto.EventKind
	// reqKind is what the agent's terminal last said it waits for
	// (provider.RequestReader): approval-requested, input-requested, or ""
	// for nothing; reqAt when it said so, reqSig the signal.
	reqKind proto.EventKind
	reqAt   time.Time
	reqSig  string

	// run serializes the estimation: the poll loop and SurfaceExited hold
	// it while they read processes and transcripts and emit.
	run    sync.Mutex
	agent  *agentRun
	exited bool
	// plainPGID is the foreground group last inspected and found to run
	// no agent, at plainAt; it is inspected again after plainRecheck, or
	// at once when recheck is set.
	plainPGID int
	plainAt   time.Time
	// recheck: something may have started a program without changing the
	// foreground group (a typed Enter before `exec claude`, an OSC 133
	// command mark).
	recheck atomic.Bool
}

// plainRecheck is how long a foreground group found to run no agent goes
// without being inspected again. A new foreground job is a new group and
// is inspected at the next poll; only a program started in place (`exec
// claude`) keeps the group, and a typed Enter or a shell's command mark
// asks for a look at once, so the wait is for scripts that exec an agent.
// Reading /proc/PID/cmdline every poll was most of an idle pane's cost.
const plainRecheck = 10 * time.Second

// agentRun is one agent process observed in a pane's foreground.
type agentRun struct {
	provider  string
	pgid      int
	startedAt time.Time
	dSeq      uint64    // s.dSeq when the launch was observed
	goneAt    time.Time // when the group was first seen gone; zero while alive
	standDown bool      // hooks report this provider: emit nothing more
	last      time.Time // the latest occurredAt emitted; events only move forward

	coarse     string    // the open coarse run; "" when none is open
	coarseFrom time.Time // when it opened: only later evidence ends it
	coarseAt   time.Time // its last event
	// endedAt is when the last coarse run ended: only work reported
	// after it opens the next one.
	endedAt time.Time
	// idle: a turn reader's agent is tracked but no run is open, because
	// nothing yet says it works (before its first prompt, at a start-up
	// dialog); the coarse run opens on working activity.
	idle    bool
	turn    string // the provider's key of the open turn; "" when none
	turnRun string
	seen    map[string]bool // turn keys already started

	tr     *tracker // nil for providers without turn reading
	cwd    string
	wantID string // the native id the tracker was last asked to find

	proved    string    // the session the agent's processes said they are in (prove.go)
	nextProve time.Time // when to ask them again
	reported  string    // the native id last given to Config.OnNativeID

	// reqRun and reqAt: the run the terminal's request (surface.reqAt)
	// was made on, so that each request is recorded once per run.
	reqRun string
	reqAt  time.Time
}

// New returns an estimator; it starts nothing (see Run).
func New(cfg Config) *Estimator {
	e := &Estimator{
		cfg:      cfg,
		log:      cfg.Logger,
		now:      cfg.Now,
		poll:     cfg.Poll,
		exes:     executables(),
		inspect:  inspectProcess,
		alive:    groupAlive,
		cwdOf:    processCwd,
		treeOf:   processTree,
		dirs:     map[string]string{},
		surfaces: map[string]*surface{},
		claims:   map[string]string{},
		wake:     make(chan struct{}, 1),
		fuse:     make(chan fused, fuseQueue),
		held:     map[string]fused{},
		answers:  map[string]pendingAnswer{},
	}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.poll <= 0 {
		e.poll = DefaultPoll
	}
	if e.cfg.BellInterval <= 0 {
		e.cfg.BellInterval = DefaultBellInterval
	}
	if e.cfg.AttentionInterval <= 0 {
		e.cfg.AttentionInterval = DefaultAttentionInterval
	}
	return e
}

// SurfaceStarted starts watching a pane. A second call for the same id is
// ignored.
func (e *Estimator) SurfaceStarted(s Surface) {
	if s.ID == "" {
		return
	}
	sf := &surface{Surface: s, log: e.log.With("surface_id", s.ID, "session_id", s.SessionID), dCode: -1}
	sf.act.bell.Interval = e.cfg.BellInterval
	if _, ok := all.Launch(s.Provider); ok {
		sf.firstClass = s.Provider
		sf.agentProv = s.Provider
	}
	e.mu.Lock()
	if _, dup := e.surfaces[s.ID]; dup {
		e.mu.Unlock()
		return
	}
	e.surfaces[s.ID] = sf
	e.mu.Unlock()
	e.nudge()
}

// Signals takes the terminal signals the pane's scanner found. It runs on
// the pane's reader goroutine: it only updates memory under a short lock
// and never blocks.
func (e *Estimator) Signals(surfaceID string, sigs []termsignal.Signal) {
	if len(sigs) == 0 {
		return
	}
	s := e.lookup(surfaceID)
	if s == nil {
		return
	}
	now := e.now()
	changed, wake := false, false
	var asks []AttentionRequest
	var statuses []termsignal.Signal
	titled := false // a title said the agent works
	s.sig.Lock()
	rr, reads := all.As[provider.RequestReader](s.agentProv)
	for _, sig := range sigs {
		prev := s.act.cur.State
		if (sig.Kind == termsignal.KindAgentStatus || sig.Kind == termsignal.KindProgress) && e.cfg.CurrentRun != nil {
			statuses = append(statuses, sig)
		}
		if reads {
			if kind, ok := rr.Request(sig); ok && kind != s.reqKind {
				s.reqKind, s.reqAt, s.reqSig = kind, now, evidence(sig)
				wake = wake || (kind != "" && s.tracking)
			}
		}
		switch sig.Kind {
		case termsignal.KindPrompt:
			s.recheck.Store(true)
			if sig.Mark == 'D' {
				s.dSeq++
				s.dCode = sig.ExitCode
				wake = wake || s.tracking
			}
		case termsignal.KindCwd:
			if sig.Path != "" {
				s.oscCwd = sig.Path
			}
		}
		ch, ask := s.act.apply(s.agentProv, sig, now)
		changed = changed || ch
		if ch && s.act.cur.State == Working && sig.Kind == termsignal.KindTitle && e.cfg.CurrentRun != nil {
			titled = true
		}
		if ch && s.act.cur.State == Waiting && (prev == Working || prev == Attention) {
			s.idleAt, s.idleSig, s.idleKind = now, evidence(sig), idleKind(sig)
			wake = wake || s.tracking
		}
		if ask && (!s.asked || now.Sub(s.lastAsk) >= e.cfg.AttentionInterval || (s.askedBell && sig.Kind != termsignal.KindBell)) {
			s.asked, s.lastAsk, s.askedBell = true, now, sig.Kind == termsignal.KindBell
			asks = append(asks, AttentionRequest{Text: s.act.cur.Notification, Evidence: evidence(sig), At: now})
		}
	}
	act := s.act.cur
	s.sig.Unlock()
	for _, sig := range statuses {
		e.status(surfaceID, sig, now)
	}
	if titled {
		e.enqueue(fused{surface: surfaceID, working: true, ev: Evidence{Source: runstate.SourceTerminal, At: now}})
	}
	if wake {
		e.nudge()
	}
	if changed && e.cfg.OnActivity != nil {
		e.cfg.OnActivity(surfaceID, act)
	}
	if e.cfg.OnAttention != nil {
		for _, r := range asks {
			e.cfg.OnAttention(surfaceID, r)
		}
	}
}

// HookEventSeen tells the estimator that a hook event of provider arrived
// for the surface: from now on the hooks report that provider's runs there.
// It does not block; the next poll ends an open coarse run.
func (e *Estimator) HookEventSeen(surfaceID, provider string) {
	s := e.lookup(surfaceID)
	if s == nil {
		return
	}
	s.sig.Lock()
	if s.hooked == nil {
		s.hooked = map[string]bool{}
	}
	s.hooked[provider] = true
	s.sig.Unlock()
	e.nudge()
}

// SurfaceExited reports the end of the pane's process with its exit status
// and forgets the surface. An agent still tracked there ends: its open run
// gets a processExited event, emitted before SurfaceExited returns, so call
// it before events.Engine.CloseSurface (which would otherwise record the
// run as disconnected).
func (e *Estimator) SurfaceExited(ctx context.Context, surfaceID string, exitCode int) {
	e.mu.Lock()
	s := e.surfaces[surfaceID]
	delete(e.surfaces, surfaceID)
	e.mu.Unlock()
	if s == nil {
		return
	}
	s.run.Lock()
	defer s.run.Unlock()
	s.exited = true
	if a := s.agent; a != nil {
		// The status is the agent's only when the agent is the pane's process.
		e.finish(ctx, s, a, HookProcessExited, exitCode, a.pgid == s.PID, e.now())
	}
}

// Activity returns what the pane's terminal signals say; the zero Activity
// for an unknown surface.
func (e *Estimator) Activity(surfaceID string) Activity {
	s := e.lookup(surfaceID)
	if s == nil {
		return Activity{}
	}
	s.sig.Lock()
	defer s.sig.Unlock()
	a := s.act.cur
	a.Recent = slices.Clone(s.act.recent)
	return a
}

// Run polls every surface each Config.Poll, and at once after an event that
// may end a run (an OSC 133 D mark, HookEventSeen), until ctx ends. One
// goroutine serves every surface. It returns nil when ctx ends.
func (e *Estimator) Run(ctx context.Context) error {
	if !e.running.CompareAndSwap(false, true) {
		return errors.New("run native estimator: already running")
	}
	defer e.running.Store(false)
	// Evidence is fused on a goroutine of its own, so that a key is
	// applied at once even while a poll reads transcripts.
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { e.fuseLoop(ctx) })
	e.wmu.Lock()
	e.wctx, e.wg = ctx, &wg
	e.wmu.Unlock()
	defer func() {
		e.wmu.Lock()
		if fw := e.files.Swap(nil); fw != nil {
			fw.Close()
		}
		e.wctx, e.wg = nil, nil
		e.wmu.Unlock()
	}()
	t := time.NewTimer(e.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-e.wake:
		}
		e.pollOnce(ctx)
		next := e.poll
		if e.now().UnixNano() < e.fastUntil.Load() {
			next = min(next, fastPoll)
		}
		t.Reset(next)
	}
}

// watchLoop wakes the poll loop when a followed transcript is written,
// at most once per writeGap: an agent that streams records must not
// make the loop spin.
func (e *Estimator) watchLoop(ctx context.Context, fw *fsnotify.Watcher) {
	var pend <-chan time.Time
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-fw.Events:
			if !ok {
				return
			}
			if !ev.Has(fsnotify.Write) || pend != nil {
				continue
			}
			if wait := writeGap - time.Since(last); wait > 0 {
				pend = time.After(wait)
				continue
			}
			last = time.Now()
			e.nudge()
		case <-pend:
			pend, last = nil, time.Now()
			e.nudge()
		case err, ok := <-fw.Errors:
			if !ok {
				return
			}
			e.log.Debug("transcript watcher", "err", err)
		}
	}
}

// watchFile starts or stops watching a followed transcript, making the
// watcher on first use while Run runs; otherwise it does nothing.
func (e *Estimator) watchFile(path string, on bool) {
	if path == "" {
		return
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	fw := e.files.Load()
	if fw == nil {
		if !on || e.wctx == nil {
			return
		}
		var err error
		if fw, err = fsnotify.NewWatcher(); err != nil {
			e.log.Warn("transcript watcher unavailable; transcripts are read every poll", "err", err)
			return
		}
		e.files.Store(fw)
		ctx := e.wctx
		e.wg.Go(func() { e.watchLoop(ctx, fw) })
	}
	var err error
	if on {
		err = fw.Add(path)
	} else {
		err = fw.Remove(path)
	}
	if err != nil && on {
		e.log.Debug("watch transcript", "path", path, "err", err)
	}
}

func (e *Estimator) nudge() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *Estimator) lookup(id string) *surface {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.surfaces[id]
}

// pollOnce runs one estimation step for every surface.
func (e *Estimator) pollOnce(ctx context.Context) {
	e.mu.RLock()
	list := make([]*surface, 0, len(e.surfaces))
	for _, s := range e.surfaces {
		list = append(list, s)
	}
	e.mu.RUnlock()
	for _, s := range list {
		if ctx.Err() != nil {
			return
		}
		e.tick(ctx, s)
	}
}

// tick is one estimation step of a surface: follow the agent in the
// foreground, notice it leave, read its transcript.
func (e *Estimator) tick(ctx context.Context, s *surface) {
	s.run.Lock()
	defer s.run.Unlock()
	if s.exited || s.ForegroundPGID == nil {
		return
	}
	now := e.now()
	pgid, err := s.ForegroundPGID()
	known := err == nil && pgid > 0
	if a := s.agent; a != nil {
		if !a.standDown && e.hooksActive(s, a.provider) {
			e.standDown(ctx, s, a)
		}
		if known && pgid == a.pgid {
			a.goneAt = time.Time{}
			e.boardEnded(s, a)
			if !a.standDown {
				e.hurryForRequest(s, a)
			}
			e.readTurns(ctx, s, a, now)
			if !a.standDown {
				e.terminalEnd(ctx, s, a)
				e.applyRequest(ctx, s, a)
			}
			if a.idle && !a.standDown && a.turn == "" && (a.tr == nil || a.tr.path == "") {
				// Work that no transcript explains: the transcript
				// reports a prompt within a poll or two, so only work
				// that lasts, and that began after the last coarse run
				// ended, opens the coarse run.
				s.sig.Lock()
				act := s.act.cur
				s.sig.Unlock()
				if act.State == Working && now.Sub(act.Since) >= workGrace && act.Since.After(a.endedAt) {
					e.openCoarse(ctx, s, a, now, HookLaunchObserved, a.provider+" started (process group "+strconv.Itoa(a.pgid)+"), working ("+act.Evidence+")")
				}
			}
			return
		}
		if a.pgid == s.PID || e.alive(a.pgid) {
			// The pane's own process ends with SurfaceExited; a group that
			// still exists was stopped or sent to the background.
			return
		}
		s.sig.Lock()
		dSeq, dCode := s.dSeq, s.dCode
		s.sig.Unlock()
		switch {
		case dSeq > a.dSeq:
			e.finish(ctx, s, a, HookCommandFinished, dCode, dCode >= 0, now)
		case a.goneAt.IsZero():
			a.goneAt = now // give the shell a moment to report the exit status
			return
		case now.Sub(a.goneAt) < max(e.poll, exitGrace):
			return
		default:
			e.finish(ctx, s, a, HookProcessExited, -1, false, now)
		}
	}
	if !known {
		return
	}
	recheck := s.recheck.Swap(false)
	if s.agent == nil && pgid == s.plainPGID && !recheck && now.Sub(s.plainAt) < plainRecheck {
		return
	}
	e.observe(ctx, s, pgid, now)
}

// observe starts tracking the foreground group when it runs an agent.
func (e *Estimator) observe(ctx context.Context, s *surface, pgid int, now time.Time) {
	prov := ""
	if info, err := e.inspect(pgid); err == nil {
		prov = matchProvider(e.exes, info)
	}
	if prov == "" && pgid == s.PID {
		prov = s.firstClass
	}
	if prov == "" {
		s.plainPGID, s.plainAt = pgid, now
		return
	}
	s.plainPGID = 0
	a := &agentRun{provider: prov, pgid: pgid, startedAt: now, last: now}
	s.sig.Lock()
	a.dSeq = s.dSeq
	s.agentProv, s.tracking = prov, true
	s.act.strong = false
	s.sig.Unlock()
	s.agent = a
	if e.hooksActive(s, prov) {
		// The hooks report the runs; the transcript is still read for
		// what they never report (the fusion rule).
		a.standDown = true
		a.tr = newTracker(prov, e.cfg.Env)
		s.log.Info("agent observed; its hooks report its runs", "provider", prov, "pgid", pgid)
		return
	}
	a.tr = newTracker(prov, e.cfg.Env)
	if a.tr != nil {
		// An agent whose transcript is read is idle until a prompt starts
		// a turn or its terminal says it works: at launch it waits for a
		// prompt or shows a start-up dialog.
		a.idle = true
		s.log.Info("agent observed in the foreground, idle", "provider", prov, "pgid", pgid)
		return
	}
	e.openCoarse(ctx, s, a, now, HookLaunchObserved, prov+" started (process group "+strconv.Itoa(pgid)+")")
}

// openCoarse opens a coarse run of the agent: at launch for a provider
// whose transcript is not read; otherwise once its terminal says it works
// and no turn is open, or, for a provider whose turn keys are private
// (Gemini CLI), when its transcript records a prompt. Each gets its own
// id: a coarse run that ended is never reopened.
func (e *Estimator) openCoarse(ctx context.Context, s *surface, a *agentRun, at time.Time, hook, msg string) {
	a.idle = false
	a.coarseFrom = a.next(at)
	a.coarseAt = a.coarseFrom
	a.coarse = uuid.NewSHA1(nativeNS, []byte("coarse\x00"+s.ID+"\x00"+strconv.Itoa(a.pgid)+"\x00"+
		strconv.FormatInt(a.startedAt.UnixNano(), 10)+"\x00"+strconv.FormatInt(a.coarseFrom.UnixNano(), 10))).String()
	s.log.Info("agent run opened", "provider", a.provider, "pgid", a.pgid, "run_id", a.coarse, "hook", hook, "message", msg)
	e.emit(ctx, s, a, a.coarse, hook, proto.KindStarted, a.coarseAt, msg)
}

// endCoarse ends the open coarse run with kind, on evidence seen at at
// (hook and msg say which), unless the board already has it ended. The
// agent is then idle until new evidence opens the next run.
func (e *Estimator) endCoarse(ctx context.Context, s *surface, a *agentRun, hook string, kind proto.EventKind, at time.Time, msg string) {
	if a.coarse == "" || e.boardEnded(s, a) {
		return
	}
	a.coarseAt = a.next(at)
	s.log.Info("agent run ended", "provider", a.provider, "run_id", a.coarse, "hook", hook, "kind", string(kind), "evidence", msg)
	e.emit(ctx, s, a, a.coarse, hook, kind, a.coarseAt, msg)
	a.coarse, a.idle, a.endedAt = "", true, a.coarseAt
}

// boardEnded reports whether the board has the open coarse run ended
// (fused evidence did it: the user's key, the agent's status, the daemon's
// reading of a failed turn), and then forgets it.
func (e *Estimator) boardEnded(s *surface, a *agentRun) bool {
	if a.coarse == "" || e.cfg.CurrentRun == nil {
		return false
	}
	cur := e.cfg.CurrentRun(s.ID)
	if cur.RunID != a.coarse || cur.State == "" || openState(cur.State) {
		return false
	}
	a.coarse, a.idle, a.endedAt = "", true, cur.Because.OccurredAt
	if a.endedAt.IsZero() {
		a.endedAt = e.now()
	}
	return true
}

// terminalEnd ends the open coarse run when the pane's activity went from
// working to waiting after it opened: the agent's terminal says the turn
// is over (Codex's OSC 7501 done or idle, OSC 9;4;0, Gemini CLI's Ready
// title).
func (e *Estimator) terminalEnd(ctx context.Context, s *surface, a *agentRun) {
	if a.coarse == "" {
		return
	}
	s.sig.Lock()
	at, sig, kind := s.idleAt, s.idleSig, s.idleKind
	s.sig.Unlock()
	if at.After(a.coarseFrom) {
		e.endCoarse(ctx, s, a, HookTerminalTurnEnded, kind, at, sig)
	}
}

// hurryForRequest makes a new request of the agent's terminal look for
// its transcript at once: the request belongs to the turn the transcript
// is about to say, which the locator would otherwise find up to
// locateEvery later.
func (e *Estimator) hurryForRequest(s *surface, a *agentRun) {
	s.sig.Lock()
	kind, at := s.reqKind, s.reqAt
	s.sig.Unlock()
	if kind == "" || at.Equal(a.reqAt) || a.tr == nil || a.turn != "" {
		return
	}
	a.nextProve, a.tr.nextLocate = time.Time{}, time.Time{}
}

// applyRequest records what a hook-less agent's terminal says it waits for
// (provider.RequestReader: an approval, a question) on the agent's open
// run, its turn or its coarse run; with none open, a coarse run opens
// for it: the terminal is then the only evidence of the turn. Each
// request is recorded once per run, so that the turn the transcript
// starts after it gets it too. Its answer is the fusion rule's (the key,
// then the agent working again).
func (e *Estimator) applyRequest(ctx context.Context, s *surface, a *agentRun) {
	s.sig.Lock()
	kind, at, sig := s.reqKind, s.reqAt, s.reqSig
	s.sig.Unlock()
	if kind == "" {
		return
	}
	run := a.turnRun
	if run == "" {
		run = a.coarse
	}
	if run == "" {
		if !at.After(a.endedAt) {
			return // said before the last run ended: that run's
		}
		e.openCoarse(ctx, s, a, at, HookTerminalRequest, a.provider+" waits for the user ("+sig+")")
		run = a.coarse
	}
	if a.reqRun == run && a.reqAt.Equal(at) {
		return
	}
	a.reqRun, a.reqAt = run, at
	// After the run's own events, whatever the signal's time: the run
	// may have been opened by a record read after the request.
	t := at
	if !t.After(a.last) {
		t = a.last.Add(time.Nanosecond)
	}
	a.last = t
	s.log.Info("agent waits for the user", "provider", a.provider, "run_id", run, "kind", string(kind), "evidence", sig)
	e.emitEvidence(ctx, s.ID, a.provider, run, HookTerminalRequest, kind, t, sig)
}

// openState reports whether a run in state is still open.
func openState(state proto.RunState) bool {
	return state == proto.StateRunning || state == proto.StateWaitingApproval || state == proto.StateWaitingInput
}

// idleKind is how a turn ended when sig put the activity back to waiting:
// OSC 7501 state=idle after work is an interrupt (Codex's Esc; a turn that
// completes says done), anything else a success.
func idleKind(sig termsignal.Signal) proto.EventKind {
	if sig.Kind == termsignal.KindAgentStatus && sig.State == "idle" {
		return proto.KindInterrupted
	}
	return proto.KindSucceeded
}

// hooksActive reports whether the provider's hooks report runs for the
// surface: injected into its launch, or heard from there. Hooks merely
// installed prove nothing (issue 23): an agent started before `muster
// hooks setup` never loads them, and Codex runs none it was not told to
// trust.
func (e *Estimator) hooksActive(s *surface, prov string) bool {
	s.sig.Lock()
	seen := s.hooked[prov]
	s.sig.Unlock()
	return seen || (s.HooksInjected && prov == s.firstClass)
}

// standDown hands the surface's runs of the agent's provider to its hooks.
// An open coarse run ends at its own last event, so that it never becomes
// the session's current run again; an open turn run is left to the hooks,
// which use the same run id. The transcript is still followed, for the
// ends the hooks never report.
func (e *Estimator) standDown(ctx context.Context, s *surface, a *agentRun) {
	a.standDown = true
	if a.coarse != "" {
		e.emit(ctx, s, a, a.coarse, HookHooksTookOver, proto.KindSucceeded, a.coarseAt, "the "+a.provider+" hooks report its runs now")
		a.coarse = ""
	}
	a.turn, a.turnRun = "", ""
	s.log.Info("native estimation stands down", "provider", a.provider)
}

// finish ends the tracking of an agent that left the foreground: its open
// run ends with the exit status, after a last read of its transcript.
func (e *Estimator) finish(ctx context.Context, s *surface, a *agentRun, hook string, code int, known bool, now time.Time) {
	if a.tr != nil && a.tr.path != "" {
		e.applyTurns(ctx, s, a, now)
	}
	if !a.standDown {
		kind, msg := exitOutcome(code, known)
		switch {
		case a.turn != "":
			if kind == proto.KindSucceeded {
				kind = proto.KindInterrupted
			}
			e.emit(ctx, s, a, a.turnRun, hook, kind, a.next(now), "the agent "+msg+" during the turn")
			a.turn, a.turnRun = "", ""
		case a.coarse != "":
			e.emit(ctx, s, a, a.coarse, hook, kind, a.next(now), "the agent "+msg)
			a.coarse = ""
		}
		s.log.Info("agent left the foreground", "provider", a.provider, "pgid", a.pgid, "exit_code", code, "exit_known", known)
	}
	e.release(s, a)
	if e.cfg.OnUsage != nil {
		e.cfg.OnUsage(s.ID, provider.Usage{})
	}
	s.agent = nil
	s.sig.Lock()
	s.agentProv, s.tracking = s.firstClass, false
	s.reqKind, s.reqAt, s.reqSig = "", time.Time{}, ""
	changed := s.act.reset("agent exited", now)
	act := s.act.cur
	s.sig.Unlock()
	if changed && e.cfg.OnActivity != nil {
		e.cfg.OnActivity(s.ID, act)
	}
}

// exitOutcome is the kind that ends a run whose process exited with code
// (known is false when nothing reported the status).
func exitOutcome(code int, known bool) (proto.EventKind, string) {
	switch {
	case !known || code < 0:
		return proto.KindSucceeded, "exited"
	case code == 0:
		return proto.KindSucceeded, "exited with status 0"
	case code == 128+1 || code == 128+2 || code == 128+15: // SIGHUP, SIGINT, SIGTERM
		return proto.KindInterrupted, "exited with status " + strconv.Itoa(code) + " (signal " + strconv.Itoa(code-128) + ")"
	}
	return proto.KindFailed, "exited with status " + strconv.Itoa(code)
}

// readTurns finds the agent's transcript if need be and applies what was
// appended to it.
func (e *Estimator) readTurns(ctx context.Context, s *surface, a *agentRun, now time.Time) {
	t := a.tr
	if t == nil {
		return
	}
	id := ""
	if s.NativeID != nil {
		id = s.NativeID()
	}
	if id == "" || !a.standDown {
		// Without hooks nothing captures a new session (a /clear): the
		// agent's processes say which one they are in now.
		if p := e.provenID(a, now); p != "" {
			id = p
		}
	}
	if id != a.wantID {
		a.wantID, t.nextLocate = id, time.Time{}
	}
	crowd := e.crowded(s, a, id)
	cutoff := a.startedAt.Add(-(e.poll + cutoffSlack))
	switch {
	case id == "" && crowd:
		// Nothing proves which transcript of the directory is this
		// agent's: left coarse rather than guessed.
	case (t.path == "" || (id != "" && id != t.byID)) && !now.Before(t.nextLocate):
		t.nextLocate = now.Add(locateEvery)
		walk := id != "" && !now.Before(t.nextWalk)
		if walk {
			t.nextWalk = now.Add(walkEvery)
		}
		if p := e.locate(ctx, s, a, id, cutoff, now, walk, ""); p != "" {
			e.claim(s, a, p, id)
		}
	case t.path != "" && t.byID == "" && id == "" && !now.Before(t.nextSwitch):
		// Found by scanning: a newer transcript in the same place is the
		// agent's own after /clear.
		t.nextSwitch = now.Add(switchEvery)
		if p := e.locate(ctx, s, a, "", t.modTime.Add(time.Nanosecond), now, false, t.path); p != "" {
			e.claim(s, a, p, "")
		}
	}
	if t.path != "" {
		e.applyTurns(ctx, s, a, now)
	}
}

// agentDir returns the agent's working directory, found once: its own,
// else the shell's last OSC 7, else the pane's.
func (e *Estimator) agentDir(s *surface, a *agentRun) string {
	if a.cwd == "" {
		a.cwd = e.cwdOf(a.pgid)
		if a.cwd == "" {
			s.sig.Lock()
			a.cwd = s.oscCwd
			s.sig.Unlock()
		}
		if a.cwd == "" {
			a.cwd = s.CWD
		}
	}
	return a.cwd
}

func (e *Estimator) locate(ctx context.Context, s *surface, a *agentRun, id string, cutoff, now time.Time, walk bool, except string) string {
	e.agentDir(s, a)
	if id != "" && !safeID(id) {
		return ""
	}
	return a.tr.locator.Locate(ctx, provider.TurnQuery{
		CWD: a.cwd, NativeID: id, Cutoff: cutoff, Now: now, Walk: walk, Except: except,
		Taken: func(p string) bool {
			e.mu.RLock()
			defer e.mu.RUnlock()
			owner := e.claims[p]
			return owner != "" && owner != s.ID
		},
	})
}

// claim makes path the agent's transcript unless another surface follows it.
func (e *Estimator) claim(s *surface, a *agentRun, path, id string) {
	t := a.tr
	e.mu.Lock()
	if owner := e.claims[path]; owner != "" && owner != s.ID {
		e.mu.Unlock()
		return
	}
	old := ""
	if t.path != "" && t.path != path && e.claims[t.path] == s.ID {
		delete(e.claims, t.path)
		old = t.path
	}
	e.claims[path] = s.ID
	if id != "" {
		delete(e.dirs, s.ID) // settled: see crowded
	}
	e.mu.Unlock()
	if id != "" && id != a.reported && e.cfg.OnNativeID != nil {
		a.reported = id
		e.cfg.OnNativeID(s.ID, a.provider, id)
	}
	if path == t.path {
		t.byID = id
		return
	}
	s.log.Debug("following transcript", "provider", a.provider, "path", path)
	e.watchFile(old, false)
	e.watchFile(path, true)
	t.follow(path, id)
}

// release gives up the agent's transcript claim and directory.
func (e *Estimator) release(s *surface, a *agentRun) {
	e.mu.Lock()
	delete(e.dirs, s.ID)
	e.mu.Unlock()
	if a.tr == nil || a.tr.path == "" {
		return
	}
	e.mu.Lock()
	mine := e.claims[a.tr.path] == s.ID
	if mine {
		delete(e.claims, a.tr.path)
	}
	e.mu.Unlock()
	if mine {
		e.watchFile(a.tr.path, false)
	}
}

// applyTurns reads the transcript and turns its records into turn runs.
func (e *Estimator) applyTurns(ctx context.Context, s *surface, a *agentRun, now time.Time) {
	first := a.tr.off == 0
	recs, err := a.tr.read()
	switch {
	case err == nil:
	case (errors.Is(err, transcript.ErrNotRegular) || errors.Is(err, transcript.ErrSymlink)) && a.tr.skipped != a.tr.path:
		// Once per path: it is skipped, never waited on, on every poll.
		a.tr.skipped = a.tr.path
		s.log.Warn("transcript skipped", "path", a.tr.path, "err", err)
	default:
		s.log.Debug("read transcript", "path", a.tr.path, "err", err)
	}
	cutoff := e.cutoff(s, a, first, recs)
	for _, r := range recs {
		if r.Op == provider.TurnUsage {
			if e.cfg.OnUsage != nil {
				e.cfg.OnUsage(s.ID, r.Usage)
			}
			continue
		}
		e.applyTurn(ctx, s, a, r, cutoff, now)
	}
}

// cutoff is the time before which a transcript record is history: a
// little before the launch was observed, because a prompt given on the
// command line is written at once and the launch is seen up to a poll
// late. A transcript whose first record is older than that predates the
// launch (a resumed conversation): its records up to the launch are
// history, even one written seconds before it (a resume right after a
// turn), so the slack shrinks to the poll. And nothing written before the
// pane's process started (Surface.Started) is the agent's when the agent
// is that process. first: recs are the start of the transcript.
func (e *Estimator) cutoff(s *surface, a *agentRun, first bool, recs []provider.Turn) time.Time {
	loose := a.startedAt.Add(-(e.poll + cutoffSlack))
	if first {
		a.tr.resumed = false
		for _, r := range recs {
			if !r.At.IsZero() {
				a.tr.resumed = r.At.Before(loose)
				break
			}
		}
	}
	cut := loose
	if a.tr.resumed {
		cut = a.startedAt.Add(-e.poll)
	}
	if a.pgid == s.PID && s.Started.After(cut) {
		cut = s.Started
	}
	return cut
}

// applyTurn applies one transcript record. The first turn ends the coarse
// run: per-turn runs take over. Records written before the launch are
// history and change nothing.
func (e *Estimator) applyTurn(ctx context.Context, s *surface, a *agentRun, r provider.Turn, cutoff, now time.Time) {
	if !r.At.IsZero() && r.At.Before(cutoff) {
		return
	}
	at := r.At
	if at.IsZero() || at.After(now) {
		at = now
	}
	_, private := all.As[provider.PrivateTurnKeys](a.provider)
	if a.standDown {
		// The hooks report this provider's turns, on the same run ids.
		// Only an end the hooks never report is evidence (the fusion
		// rule).
		if r.Op == provider.TurnEnd && r.HookSilent {
			// A private key is not the hooks' run id (Gemini CLI): the
			// end applies to the current run, if it is the provider's
			// and started before the record.
			run := ""
			if !private {
				run = hookevent.TurnRunID(a.provider, r.Key)
			}
			e.apply(ctx, fused{surface: s.ID, ev: Evidence{
				Source: runstate.SourceTranscript, Hook: HookTranscriptTurnEnd, Signal: r.Text, Kind: r.Kind,
				RunID: run, Provider: a.provider, At: at,
			}})
		}
		return
	}
	if private {
		// Hook-less, a transcript whose turn keys are private (Gemini
		// CLI's chat file) opens a coarse run per prompt and ends it
		// where it marks the end (a cancel, an API error); a success it
		// does not mark is the terminal's to tell (terminalEnd).
		switch {
		case r.Op == provider.TurnStart && !a.seen[r.Key]:
			if a.seen == nil || len(a.seen) >= maxSeen {
				a.seen = map[string]bool{}
			}
			a.seen[r.Key] = true
			if a.coarse == "" && at.After(a.endedAt) {
				msg := r.Text
				if msg == "" {
					msg = "prompt submitted"
				}
				e.openCoarse(ctx, s, a, at, HookTurnStarted, msg)
			}
		case r.Op == provider.TurnEnd && a.coarse != "" && !at.Before(a.coarseFrom):
			e.endCoarse(ctx, s, a, HookTranscriptTurnEnd, r.Kind, at, r.Text)
		}
		return
	}
	switch r.Op {
	case provider.TurnStart:
		if a.seen[r.Key] {
			return
		}
		if a.seen == nil || len(a.seen) >= maxSeen {
			a.seen = map[string]bool{}
		}
		a.seen[r.Key] = true
		if a.turn != "" {
			e.emit(ctx, s, a, a.turnRun, HookTurnStarted, proto.KindInterrupted, a.next(at), "a new prompt started before the turn ended")
		}
		start := a.next(at)
		if a.coarse != "" && !start.After(a.coarseAt) {
			start = a.coarseAt.Add(time.Nanosecond)
			a.last = start
		}
		run := hookevent.TurnRunID(a.provider, r.Key)
		msg := r.Text
		if msg == "" {
			msg = "prompt submitted"
		}
		e.emit(ctx, s, a, run, HookTurnStarted, proto.KindStarted, start, msg)
		a.turn, a.turnRun, a.idle = r.Key, run, false
		if a.coarse != "" {
			// Just before the turn, so that the turn stays the current run
			// and the coarse run's end opens no attention item.
			e.emit(ctx, s, a, a.coarse, HookTurnStarted, proto.KindSucceeded, start.Add(-time.Nanosecond), "split into prompt turns")
			a.coarse = ""
		}
	case provider.TurnEnd:
		if r.Key != a.turn || a.turn == "" {
			return
		}
		msg := r.Text
		if msg == "" {
			msg = "turn " + string(r.Kind)
		}
		e.emit(ctx, s, a, a.turnRun, HookTurnCompleted, r.Kind, a.next(at), msg)
		a.turn, a.turnRun = "", ""
	}
}

// next returns at, moved forward to the latest time already emitted.
func (a *agentRun) next(at time.Time) time.Time {
	if at.Before(a.last) {
		at = a.last
	}
	a.last = at
	return at
}

// emit records one synthesized event. Failures are logged: the estimate
// is best effort and the next state change corrects it.
func (e *Estimator) emit(ctx context.Context, s *surface, a *agentRun, run, hook string, kind proto.EventKind, at time.Time, msg string) {
	if e.cfg.Emit == nil {
		return
	}
	ev := proto.Event{
		SchemaVersion: proto.EventSchemaVersion,
		ID:            proto.RawID{RawValue: uuid.NewSHA1(nativeNS, []byte("event\x00"+run+"\x00"+hook+"\x00"+string(kind))).String()},
		RunID:         proto.RawID{RawValue: run},
		SurfaceID:     proto.RawID{RawValue: s.ID},
		Provider:      a.provider,
		Kind:          kind,
		OccurredAt:    at.UTC(),
		Message:       clipMessage(msg),
		HookName:      hook,
	}
	ctx, cancel := context.WithTimeout(ctx, emitTimeout)
	defer cancel()
	if err := e.cfg.Emit(ctx, ev); err != nil {
		s.log.Warn("record native event", "provider", a.provider, "hook", hook, "kind", string(kind), "run_id", run, "err", err)
		return
	}
	s.log.Debug("native event", "provider", a.provider, "hook", hook, "kind", string(kind), "run_id", run)
}

// clipMessage bounds an event message as the hook helper does.
func clipMessage(s string) string {
	if len(s) <= hookevent.MaxMessage {
		return s
	}
	i := hookevent.MaxMessage - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
