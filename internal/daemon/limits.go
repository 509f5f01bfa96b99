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
)

// An agent stopped at its provider's usage or rate limit shows the run
// state limited: its run failed, and its provider reads the failure's
// evidence as the limit (provider.LimitReader), until the reset time the
// agent named passes or another run starts.

// limitOf reads the surface's current run as a limit.
func (d *Daemon) limitOf(surfaceID string, now time.Time) (proto.Limit, bool) {
	if d.events == nil || surfaceID == "" {
		return proto.Limit{}, false
	}
	run, ok := d.events.SurfaceCurrentRun(surfaceID)
	if !ok || run.State != proto.StateFailed {
		return proto.Limit{}, false
	}
	lr, ok := all.As[provider.LimitReader](run.Provider)
	if !ok {
		return proto.Limit{}, false
	}
	ev := run.Because
	resets, ok := lr.ReadLimit(ev.Message, ev.OccurredAt)
	if !ok || !resets.IsZero() && !now.Before(resets) {
		return proto.Limit{}, false
	}
	from := string(ev.Source)
	if ev.HookName != "" {
		from += " " + ev.HookName
	}
	l := proto.Limit{Evidence: string(ev.Kind) + " from " + from + " (" + ev.Provider + ")", Message: ev.Message}
	if !resets.IsZero() {
		l.ResetsAt = resets.UTC().Format(time.RFC3339)
	}
	return l, true
}

// fillLimit turns a failed or idle run that stopped at its limit into the
// limited state of an ls row.
func (d *Daemon) fillLimit(surfaceID string, info *proto.SessionInfo) {
	if info.RunState == nil {
		return
	}
	if st := proto.RunState(*info.RunState); st != proto.StateFailed && st != proto.StateIdle {
		return
	}
	l, ok := d.limitOf(surfaceID, time.Now())
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
	surfaceID := ""
	if ok {
		surfaceID = s.surface.ID
	}
	d.mu.Unlock()
	return d.limitOf(surfaceID, time.Now())
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

// continueAtLimits sends the provider's continue to each session that
// asked for it, once its limit reset (plus the skew): once per run, only
// while the run is still at that limit (an agent that went on by itself,
// the CLI's own auto-continue, started another run), and only when nobody
// typed into the pane since the agent stopped.
func (d *Daemon) continueAtLimits(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		type due struct{ name, surfaceID, runID, prompt string }
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
			l, ok := d.limitOf(s.surface.ID, run.Because.OccurredAt)
			if !ok || l.ResetsAt == "" {
				continue
			}
			resets, _ := time.Parse(time.RFC3339, l.ResetsAt)
			if now.Before(resets.Add(d.limitSkew())) {
				continue
			}
			s.continuedRun = run.RunID
			if s.pane.LastInput().After(run.Because.ReceivedAt) {
				d.logger.Info("usage limit reset: not continued, the user typed since", "session", s.rec.Name)
				continue
			}
			lr, _ := all.As[provider.LimitReader](run.Provider)
			dues = append(dues, due{s.rec.Name, s.surface.ID, run.RunID, lr.ContinuePrompt()})
		}
		d.mu.Unlock()
		for _, u := range dues {
			err := d.send(ctx, func() panepeer.Where { return panepeer.Where{} }, proto.SendArgs{Name: u.name, Text: u.prompt, Enter: true})
			d.logger.Info("usage limit reset: continued", "session", u.name, "run_id", u.runID, "err", err)
			if err == nil && !d.events.Notify(u.surfaceID, fmt.Sprintf("its usage limit reset: muster sent %q", u.prompt), time.Now()) {
				d.logger.Debug("continue notice dropped: the event queue is full", "surface_id", u.surfaceID)
			}
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
