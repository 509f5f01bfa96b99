package native

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
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
	// DefaultAttentionInterval rate-limits AttentionRequested per pane: programs
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
	// Events records the events the estimator synthesizes. Nil: only
	// activity is tracked.
	Events EventSink
	// Runs is the run-state board the synthesized events feed. Nil: keys
	// are not read.
	Runs RunBoard
	// Listener, when set, learns what the estimator finds out about each
	// surface.
	Listener Listener
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger; discards when nil.
	Logger *slog.Logger
	// Env locates the providers' homes (transcripts).
	Env transcript.Env
	// Poll is the interval of Run's loop; DefaultPoll when zero.
	Poll time.Duration
	// BellInterval debounces bells: a bell within it of the last one that
	// counted is ignored. DefaultBellInterval when zero.
	BellInterval time.Duration
	// AttentionInterval is the least time between two attention requests
	// of one pane (Listener.AttentionRequested): DefaultAttentionInterval
	// when zero.
	AttentionInterval time.Duration
}

// EventSink records a synthesized event (the daemon: events.Engine.Emit,
// dropping its inserted result). It is called from Run's goroutine and
// from SurfaceExited, never from Signals.
type EventSink interface {
	Emit(ctx context.Context, ev proto.Event) error
}

// RunBoard is the run-state board as the estimator reads it.
type RunBoard interface {
	// CurrentRun returns a surface's current run (the zero CurrentRun
	// when none), for the fusion rule and for the end of a coarse run
	// that fused evidence already ended. It is called from Run's
	// goroutines.
	CurrentRun(surfaceID string) CurrentRun
}

// Listener learns what the estimator finds out about a surface. None of
// its methods may block.
type Listener interface {
	// NativeIDFound gets the provider session id of a surface's agent
	// once the estimator follows that session's transcript by its id: the
	// id its own processes prove (provider.ProcessSessionReader) or the
	// one assigned at launch, now on disk. The daemon records it, so that
	// a session whose hooks never ran is resumed in its conversation.
	// It is called from Run's goroutine, once per id.
	NativeIDFound(surfaceID, provider, nativeID string)
	// ActivityChanged is called after a surface's Activity changed, on
	// the goroutine that changed it (often the pane's reader).
	ActivityChanged(surfaceID string, a Activity)
	// AttentionRequested is called for a notification or a bell (past
	// the bell limiter) of a pane, at most once per AttentionInterval per
	// pane (later ones within it are dropped; the activity still shows
	// them), on the pane's reader goroutine.
	AttentionRequested(surfaceID string, r AttentionRequest)
	// UsageReported gets what the tracked agent's transcript reports of
	// its model and context (provider.TurnUsage records, history
	// included: the latest is the current context), and the zero Usage
	// when the agent leaves the foreground. It is called from Run's
	// goroutine and from SurfaceExited.
	UsageReported(surfaceID string, u provider.Usage)
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
	sig sync.Mutex
	act activityTracker
	// skipped notes the transcript files skipped as hostile while
	// following the pane's agent (Activity.Skipped), newest last.
	skipped   []string
	agentProv string // the provider whose title fallbacks apply
	tracking  bool   // an agent is in the foreground: a D mark wakes the loop
	dSeq      uint64 // OSC 133/633 D marks seen
	dCode     int    // the exit code of the last one (-1: none given)
	oscCwd    string // the last OSC 7 directory
	hooked    map[string]bool
	lastAsk   time.Time // the last request passed to AttentionRequested
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
	reported  string    // the native id last given to NativeIDFound

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
		if (sig.Kind == termsignal.KindAgentStatus || sig.Kind == termsignal.KindProgress) && e.cfg.Runs != nil {
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
		if ch && s.act.cur.State == Working && sig.Kind == termsignal.KindTitle && e.cfg.Runs != nil {
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
	if l := e.cfg.Listener; l != nil {
		if changed {
			l.ActivityChanged(surfaceID, act)
		}
		for _, r := range asks {
			l.AttentionRequested(surfaceID, r)
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
	first := !s.hooked[provider]
	s.hooked[provider] = true
	s.sig.Unlock()
	// Only the first hook changes what a poll does (it stands the
	// estimation down): a poll per hook read every pane's foreground
	// group at the rate hooks arrive.
	if first {
		e.nudge()
	}
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
	a.Skipped = slices.Clone(s.skipped)
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

// emit records one synthesized event. Failures are logged: the estimate
// is best effort and the next state change corrects it.
func (e *Estimator) emit(ctx context.Context, s *surface, a *agentRun, run, hook string, kind proto.EventKind, at time.Time, msg string) {
	if e.cfg.Events == nil {
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
	if err := e.cfg.Events.Emit(ctx, ev); err != nil {
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
