package native

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/musterhq/muster/internal/hookevent"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/runstate"
	"github.com/musterhq/muster/internal/transcript"
)

// This file is the estimator's transcript following: finding the file an
// agent writes (locate, claim), reading what was appended (readTurns), and
// turning its records into run events (applyTurns, applyTurn).

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
	if id != "" && id != a.reported && e.cfg.Listener != nil {
		a.reported = id
		e.cfg.Listener.NativeIDFound(s.ID, a.provider, id)
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
	case (errors.Is(err, transcript.ErrNotRegular) || errors.Is(err, transcript.ErrSymlink) || errors.Is(err, syscall.ELOOP)) && a.tr.skipped != a.tr.path:
		// Once per path: it is skipped, never waited on, on every poll.
		a.tr.skipped = a.tr.path
		s.log.Warn("transcript skipped", "path", a.tr.path, "err", err)
		e.noteSkipped(s, err.Error())
	case a.tr.skipped == a.tr.path:
	default:
		s.log.Debug("read transcript", "path", a.tr.path, "err", err)
	}
	if a.tr.long > a.tr.longNoted {
		a.tr.longNoted = a.tr.long
		s.log.Warn("transcript line skipped", "path", a.tr.path, "lines", a.tr.long)
		e.noteSkipped(s, fmt.Sprintf("%s: %d lines over %d MiB skipped", a.tr.path, a.tr.long, maxLine>>20))
	}
	cutoff := e.cutoff(s, a, first, recs)
	for _, r := range recs {
		if r.Op == provider.TurnUsage {
			if e.cfg.Listener != nil {
				e.cfg.Listener.UsageReported(s.ID, r.Usage)
			}
			continue
		}
		e.applyTurn(ctx, s, a, r, cutoff, now)
	}
}

// maxSkipped bounds the notes of skipped transcript files a pane keeps.
const maxSkipped = 8

// noteSkipped records why a transcript file was skipped, for explain; a
// note already there moves to the end.
func (e *Estimator) noteSkipped(s *surface, note string) {
	s.sig.Lock()
	defer s.sig.Unlock()
	s.skipped = slices.DeleteFunc(s.skipped, func(n string) bool { return n == note })
	if len(s.skipped) >= maxSkipped {
		s.skipped = s.skipped[1:]
	}
	s.skipped = append(s.skipped, note)
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
