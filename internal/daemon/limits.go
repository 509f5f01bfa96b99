package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/panepeer"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/transcript"
)

// An agent stopped at its provider's usage or rate limit shows the run
// state limited: its run failed, and its provider reads the failure's
// evidence as the limit (provider.LimitReader), until the reset time the
// agent named passes or another run starts.

// limitOf reads the surface's current run as a limit: from the event
// that ended it (provider.LimitReader), else from what the provider found
// in its transcript or on its screen (provider.LimitFinder, kept in found
// by watchLimits). Callers may hold d.mu: it does no I/O.
func (d *Daemon) limitOf(surfaceID string, found foundLimit, now time.Time) (proto.Limit, bool) {
	if d.events == nil || surfaceID == "" {
		return proto.Limit{}, false
	}
	run, ok := d.events.SurfaceCurrentRun(surfaceID)
	if !ok {
		return proto.Limit{}, false
	}
	lr, ok := all.As[provider.LimitReader](run.Provider)
	if !ok {
		return proto.Limit{}, false
	}
	var l proto.Limit
	var resets time.Time
	ev := run.Because
	if r, ok := lr.ReadLimit(ev.Message, ev.OccurredAt); ok && run.State == proto.StateFailed {
		from := string(ev.Source)
		if ev.HookName != "" {
			from += " " + ev.HookName
		}
		resets = r
		l = proto.Limit{Evidence: string(ev.Kind) + " from " + from + " (" + ev.Provider + ")", Message: ev.Message}
		if resets.IsZero() && found.ok && found.runID == run.RunID && !found.limit.ResetsAt.IsZero() {
			// The failure said no reset, but the CLI said it before
			// (Claude Code's retry line): the stop is the hook's, the
			// reset the finder's.
			resets = found.limit.ResetsAt
			l.Evidence += "; reset from " + found.limit.Evidence
		}
	} else if found.ok && found.runID == run.RunID && (run.State == proto.StateFailed || openRun(run.State)) {
		resets = found.limit.ResetsAt
		l = proto.Limit{Evidence: found.limit.Evidence + " (" + run.Provider + ")", Message: found.limit.Message}
	} else {
		return proto.Limit{}, false
	}
	if !resets.IsZero() && !now.Before(resets) {
		return proto.Limit{}, false
	}
	if !resets.IsZero() {
		l.ResetsAt = resets.UTC().Format(time.RFC3339)
	}
	return l, true
}

// openRun reports whether a run in st may still be held at a limit
// dialog (Gemini CLI's).
func openRun(st proto.RunState) bool {
	return st == proto.StateRunning || st == proto.StateWaitingInput || st == proto.StateWaitingApproval
}

// foundLimit is what a provider's LimitFinder said of a pane's run.
type foundLimit struct {
	runID   string
	ok      bool
	limit   provider.Limit
	since   time.Time // when it was first found
	checked time.Time // when it was last looked for
	// told is the run state in which an item last said the limit: "" for
	// none yet, else running (the notification of a run held open at the
	// limit) or failed (the run's failure item, re-worded).
	told proto.RunState
}

// fillLimit turns a failed or idle run that stopped at its limit into the
// limited state of an ls row.
func (d *Daemon) fillLimit(surfaceID string, found foundLimit, info *proto.SessionInfo) {
	if info.RunState == nil {
		return
	}
	if st := proto.RunState(*info.RunState); st != proto.StateFailed && st != proto.StateIdle && !openRun(st) {
		return
	}
	l, ok := d.limitOf(surfaceID, found, time.Now())
	if !ok {
		return
	}
	st := string(proto.StateLimited)
	info.RunState = &st
	if l.ResetsAt != "" {
		at := l.ResetsAt
		info.LimitResetsAt = &at
	}
}

// PaneLimit is explain's view of a session's limit
// (events.PaneReporter).
func (d *Daemon) PaneLimit(sessionID string) (proto.Limit, bool) {
	d.mu.Lock()
	s, ok := d.sessions[sessionID]
	surfaceID, found := "", foundLimit{}
	if ok {
		surfaceID, found = s.surface.ID, s.found
	}
	d.mu.Unlock()
	return d.limitOf(surfaceID, found, time.Now())
}

// limitSkew is how long after a limit's reset the continue goes.
func (d *Daemon) limitSkew() time.Duration {
	switch {
	case d.opts.LimitSkew < 0:
		return 0
	case d.opts.LimitSkew == 0:
		return config.DefaultLimitSkew
	}
	return d.opts.LimitSkew
}

// limitRecheck is how often watchLimits looks again at a run its
// provider's LimitFinder has not (or no longer) found at a limit: a
// rollout's record may follow the failure, a dialog may close.
const limitRecheck = 2 * time.Second

// limitLookFor is how long after a run failed watchLimits keeps looking
// for its limit.
const limitLookFor = 30 * time.Second

// watchLimits runs once a second. It looks for the limits a provider
// finds in its transcript or on its screen (provider.LimitFinder) and
// raises an item saying when such a limit resets, once per run; and it
// sends the provider's continue to each session that asked for it, once
// its limit reset (plus the skew): once per run, only while the run is
// still at that limit (an agent that went on by itself, the CLI's own
// auto-continue, started another run), and only when nobody typed into
// the pane since the agent stopped.
func (d *Daemon) watchLimits(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d.findLimits(ctx, time.Now())
		d.continueAtLimits(ctx, time.Now())
	}
}

// findLimits asks the LimitFinder of each live pane whose current run may
// be at a limit, outside d.mu (it reads files and the screen), and tells
// the user once per run and state: a run held open at its limit (Gemini
// CLI's dialog) gets a notification item; a failed one has its failure
// item say the limit and its reset instead (events.NotifyRun), so that a
// limited run is one item, not its failure plus a notice.
func (d *Daemon) findLimits(ctx context.Context, now time.Time) {
	type look struct {
		s      *session
		run    string
		failed bool
		q      provider.LimitQuery
		f      provider.LimitFinder
		prev   foundLimit
		surf   string
		title  string
		skip   bool // tell prev only: it is already found for a run that ended
	}
	var looks []look
	d.mu.Lock()
	for _, s := range d.sessions {
		if s.pane == nil || d.events == nil {
			continue
		}
		if exited, _ := s.pane.Exited(); exited {
			continue
		}
		run, ok := d.events.SurfaceCurrentRun(s.surface.ID)
		if !ok {
			continue
		}
		f, ok := all.As[provider.LimitFinder](run.Provider)
		if !ok {
			continue
		}
		open, failed := openRun(run.State), run.State == proto.StateFailed
		if !open && !failed {
			continue
		}
		prev := s.found
		if prev.runID != run.RunID {
			prev = foundLimit{runID: run.RunID}
		}
		lk := look{s: s, run: run.RunID, failed: failed, f: f, prev: prev, surf: s.surface.ID, title: s.rec.Name}
		switch {
		case prev.ok && failed:
			if prev.told == proto.StateFailed {
				continue
			}
			lk.skip = true
		case failed && now.Sub(run.Because.ReceivedAt) > limitLookFor:
			continue
		case now.Sub(prev.checked) < limitRecheck:
			continue
		}
		p := s.pane
		at := run.Because.OccurredAt
		if open {
			at = now
		}
		env := s.rec.Env
		lk.q = provider.LimitQuery{
			Env:      transcript.Env{Home: env["HOME"], Getenv: func(k string) string { return env[k] }},
			NativeID: s.rec.NativeID, At: at, Open: open,
			Screen: func() string {
				c, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				text, _ := p.Capture(c, 0, false)
				return text
			},
		}
		looks = append(looks, lk)
	}
	d.mu.Unlock()
	for _, lk := range looks {
		fl := lk.prev
		if !lk.skip {
			l, ok := lk.f.FindLimit(lk.q)
			fl.checked = now
			switch {
			case ok:
				if !fl.ok {
					fl.since = now
				}
				fl.ok, fl.limit = true, l
			case fl.ok && fl.limit.Retrying && !lk.failed:
				// Between two of the CLI's attempts its retry line may
				// be gone; the failure that ends them keeps the limit.
			default:
				fl.ok, fl.limit, fl.since = false, provider.Limit{}, time.Time{}
			}
		}
		tell := fl.ok && (lk.failed && fl.told != proto.StateFailed ||
			!lk.failed && !fl.limit.Retrying && fl.told == "")
		if tell {
			fl.told = proto.StateRunning
			if lk.failed {
				fl.told = proto.StateFailed
			}
		}
		d.mu.Lock()
		lk.s.found = fl
		d.mu.Unlock()
		if !tell {
			continue
		}
		l := fl.limit
		msg := "usage limit reached"
		if !l.ResetsAt.IsZero() {
			msg += ": resets at " + l.ResetsAt.UTC().Format(time.RFC3339)
		} else {
			msg += " (no reset time given)"
		}
		msg += ", from " + l.Evidence
		d.logger.Info("usage limit found", "session", lk.title, "run_id", lk.run, "resets_at", l.ResetsAt, "evidence", l.Evidence, "failed", lk.failed)
		if !d.events.NotifyRun(lk.surf, lk.run, msg, now) {
			d.logger.Debug("limit notice dropped: the event queue is full", "surface_id", lk.surf)
		}
		d.stateChanged()
	}
}

// continueAtLimits sends the continues that are due.
func (d *Daemon) continueAtLimits(ctx context.Context, now time.Time) {
	type due struct {
		name, surfaceID, runID, prompt string
		finder                         provider.LimitFinder
		pane                           interface {
			Capture(context.Context, int, bool) (string, error)
		}
	}
	var dues []due
	d.mu.Lock()
	for _, s := range d.sessions {
		if !s.continueAfterLimit || s.pane == nil {
			continue
		}
		if exited, _ := s.pane.Exited(); exited {
			continue
		}
		run, ok := d.events.SurfaceCurrentRun(s.surface.ID)
		if !ok || run.RunID == s.continuedRun {
			continue
		}
		// Read as of the failure: the run is the one that stopped at
		// the limit, whether or not its reset has passed.
		asOf := run.Because.OccurredAt
		stopped := run.Because.ReceivedAt
		if s.found.ok && s.found.runID == run.RunID {
			asOf = s.found.since
			if s.found.since.After(stopped) {
				stopped = s.found.since
			}
		}
		l, ok := d.limitOf(s.surface.ID, s.found, asOf)
		if !ok || l.ResetsAt == "" {
			continue
		}
		resets, _ := time.Parse(time.RFC3339, l.ResetsAt)
		if now.Before(resets.Add(d.limitSkew())) {
			continue
		}
		s.continuedRun = run.RunID
		if s.pane.LastInput().After(stopped) {
			d.logger.Info("usage limit reset: not continued, the user typed since", "session", s.rec.Name)
			continue
		}
		lr, _ := all.As[provider.LimitReader](run.Provider)
		u := due{name: s.rec.Name, surfaceID: s.surface.ID, runID: run.RunID, prompt: lr.ContinuePrompt(), pane: s.pane}
		u.finder, _ = all.As[provider.LimitFinder](run.Provider)
		dues = append(dues, u)
	}
	d.mu.Unlock()
	for _, u := range dues {
		keys, text := "", u.prompt
		if u.finder != nil {
			c, cancel := context.WithTimeout(ctx, time.Second)
			screen, _ := u.pane.Capture(c, 0, false)
			cancel()
			keys, text = u.finder.Continue(screen)
		}
		var err error
		if keys != "" {
			// A dialog to close first; the CLI needs a moment to redraw
			// its prompt before the text.
			if err = d.send(ctx, func() panepeer.Where { return panepeer.Where{} }, proto.SendArgs{Name: u.name, Text: keys}); err == nil {
				err = sleep(ctx, 500*time.Millisecond)
			}
		}
		if err == nil {
			err = d.send(ctx, func() panepeer.Where { return panepeer.Where{} }, proto.SendArgs{Name: u.name, Text: text, Enter: true})
		}
		sent := fmt.Sprintf("%q", text)
		if text == "" {
			sent = "Enter"
		}
		d.logger.Info("usage limit reset: continued", "session", u.name, "run_id", u.runID, "keys", fmt.Sprintf("%q", keys), "text", text, "err", err)
		if err == nil && !d.events.Notify(u.surfaceID, "its usage limit reset: muster sent "+sent, time.Now()) {
			d.logger.Debug("continue notice dropped: the event queue is full", "surface_id", u.surfaceID)
		}
	}
}

// autocontinue serves op autocontinue.
func (d *Daemon) autocontinue(peer func() panepeer.Where, a proto.AutocontinueArgs) error {
	d.mu.Lock()
	s, err := d.lookupLocked(a.Name)
	if err == nil {
		err = d.mayDriveLocked(peer(), s)
	}
	if err == nil {
		s.continueAfterLimit = a.On
	}
	d.mu.Unlock()
	if err == nil {
		d.stateChanged()
	}
	return err
}
