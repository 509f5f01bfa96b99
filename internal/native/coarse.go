package native

import (
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/termsignal"
)

// This file is the estimator's coarse runs: a run opened and ended from
// the process and terminal evidence alone when no hook and no transcript
// says more, the requests read from the screen, and the stand-down once
// the session's own hooks are heard.

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
	if a.coarse == "" || e.cfg.Runs == nil {
		return false
	}
	cur := e.cfg.Runs.CurrentRun(s.ID)
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
	if e.cfg.Listener != nil {
		e.cfg.Listener.UsageReported(s.ID, provider.Usage{})
	}
	s.agent = nil
	s.sig.Lock()
	s.agentProv, s.tracking = s.firstClass, false
	s.reqKind, s.reqAt, s.reqSig = "", time.Time{}, ""
	changed := s.act.reset("agent exited", now)
	act := s.act.cur
	s.sig.Unlock()
	if changed && e.cfg.Listener != nil {
		e.cfg.Listener.ActivityChanged(s.ID, act)
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
