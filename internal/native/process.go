package native

import (
	"context"
	"strconv"
	"time"
)

// This file is the estimator's process tracking: one poll of every
// surface's foreground process group (tick, observe), which opens and
// ends the coarse runs of coarse.go and starts the transcript following
// of follow.go.

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
