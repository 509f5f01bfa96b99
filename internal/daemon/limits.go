package daemon

import (
	"time"

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

// sessionLimit is explain's view of a session's limit.
func (d *Daemon) sessionLimit(sessionID string) (proto.Limit, bool) {
	d.mu.Lock()
	s, ok := d.sessions[sessionID]
	surfaceID := ""
	if ok {
		surfaceID = s.surface.ID
	}
	d.mu.Unlock()
	return d.limitOf(surfaceID, time.Now())
}
