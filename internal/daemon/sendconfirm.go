package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/musterhq/muster/internal/native"
	"github.com/musterhq/muster/internal/panepeer"
	"github.com/musterhq/muster/internal/proto"
)

// A confirmed send (`muster send --confirm`) types a prompt only when the
// agent can take it, then answers once it was seen to take it: a run that
// started after the text was typed (any evidence the board takes: hooks,
// transcript records, the native estimator), or the terminal saying the
// program works. It never reads free text on the screen.

const (
	defaultConfirmTimeout = 30 * time.Second
	maxConfirmTimeout     = time.Hour
	// confirmPoll rechecks the pane's terminal activity, which rings no
	// channel of the engine's.
	confirmPoll = 100 * time.Millisecond
)

// blockedState says why an agent cannot take a prompt now, "" when it
// can: it waits for approval or an answer (the board says so), or a turn
// is open and the terminal asks for attention (a dialog the hooks did not
// report). A notification at the prompt (Claude's "waiting for your
// input") is no dialog: with no open turn the text reaches the prompt.
func blockedState(runState string, a native.Activity) string {
	switch proto.RunState(runState) {
	case proto.StateWaitingApproval:
		return "it waits for approval (waitingApproval)"
	case proto.StateWaitingInput:
		return "it waits for an answer to its question (waitingInput)"
	case proto.StateRunning:
		if a.State == native.Attention {
			why := a.Notification
			if why == "" {
				why = a.Evidence
			}
			return fmt.Sprintf("its terminal asks for attention during a turn (%s)", why)
		}
	}
	return ""
}

func (d *Daemon) sendConfirm(ctx context.Context, peer func() panepeer.Where, a proto.SendConfirmArgs) (proto.SendConfirmResult, error) {
	if a.Text == "" {
		return proto.SendConfirmResult{}, proto.Errorf(proto.CodeBadRequest, "a confirmed send needs text: a prompt to confirm")
	}
	if a.TimeoutMS < 0 || time.Duration(a.TimeoutMS)*time.Millisecond > maxConfirmTimeout {
		return proto.SendConfirmResult{}, proto.Errorf(proto.CodeBadRequest, "timeout %d ms: want 0 (30 s) up to %s", a.TimeoutMS, maxConfirmTimeout)
	}
	timeout := defaultConfirmTimeout
	if a.TimeoutMS > 0 {
		timeout = time.Duration(a.TimeoutMS) * time.Millisecond
	}
	d.mu.Lock()
	s, err := d.lookupLocked(a.Name)
	if err == nil {
		err = d.mayDriveLocked(peer(), s)
	}
	if err != nil {
		d.mu.Unlock()
		return proto.SendConfirmResult{}, err
	}
	p, sessionID, surfaceID, name := s.pane, s.rec.ID, s.surface.ID, s.rec.Name
	d.mu.Unlock()
	if p == nil {
		return proto.SendConfirmResult{}, proto.Errorf(proto.CodeExited, "session %q is not running", name)
	}
	if exited, _ := p.Exited(); exited {
		return proto.SendConfirmResult{}, proto.Errorf(proto.CodeExited, "session %q has exited", name)
	}
	before := d.events.SessionState(sessionID)
	var res proto.SendConfirmResult
	if why := blockedState(before.RunState, d.native.Activity(surfaceID)); why != "" {
		if !a.Force {
			return res, &proto.Error{Code: proto.CodeBlocked,
				Message: fmt.Sprintf("%s: %s; nothing typed", name, why),
				Hint:    "answer it (`muster attach " + name + "`), or --force to type anyway"}
		}
		res.Forced, res.Blocked = true, why
	}
	sentAt := time.Now()
	if err := d.send(ctx, peer, proto.SendArgs{Name: a.Name, Text: a.Text, Enter: true}); err != nil {
		return proto.SendConfirmResult{}, err
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(confirmPoll)
	defer tick.Stop()
	for res.Took == "" {
		changed := d.events.Changed()
		now := d.events.SessionState(sessionID)
		switch act := d.native.Activity(surfaceID); {
		case now.RunID != "" && now.RunID != before.RunID:
			res.Took, res.RunID = proto.TookRunStarted, now.RunID
			res.Detail = d.runEvidence(surfaceID)
		case act.State == native.Working && act.Since.After(sentAt):
			res.Took, res.Detail = proto.TookTerminalWorking, "the terminal says working: "+act.Evidence
		default:
			if exited, _ := p.Exited(); exited {
				return proto.SendConfirmResult{}, proto.Errorf(proto.CodeExited, "session %q exited before it took the prompt", name)
			}
			select {
			case <-changed:
			case <-tick.C:
			case <-deadline.C:
				state := now.RunState
				if state == "" {
					state = "no run"
				}
				return proto.SendConfirmResult{}, &proto.Error{Code: proto.CodeTimeout,
					Message: fmt.Sprintf("%s: typed, but no run started and the terminal did not say working within %s (run state: %s)", name, timeout, state),
					Hint:    "`muster explain " + name + "` shows what the agent did"}
			case <-ctx.Done():
				return proto.SendConfirmResult{}, ctx.Err()
			}
		}
	}
	if a.WaitDone {
		outcome, err := d.waitTurnEnd(ctx, surfaceID, &res)
		if err != nil {
			return proto.SendConfirmResult{}, err
		}
		res.Outcome = outcome
	}
	return res, nil
}

// runEvidence names the event that put the surface's current run in its
// state, for a confirmed send's answer.
func (d *Daemon) runEvidence(surfaceID string) string {
	r, ok := d.events.SurfaceCurrentRun(surfaceID)
	if !ok {
		return "a new run"
	}
	ev := r.Because
	from := string(ev.Source)
	if ev.HookName != "" {
		from += " " + ev.HookName
	}
	return fmt.Sprintf("%s from %s (%s)", ev.Kind, from, ev.Provider)
}

// waitTurnEnd waits until the run the prompt started ends (a run that
// only the terminal confirmed is adopted when its first event arrives),
// or the pane exits, and returns how it ended.
func (d *Daemon) waitTurnEnd(ctx context.Context, surfaceID string, res *proto.SendConfirmResult) (string, error) {
	tick := time.NewTicker(confirmPoll)
	defer tick.Stop()
	for {
		changed := d.events.Changed()
		// The run as stored, never idle: an idle run still says how its
		// turn ended.
		run, ok := d.events.SurfaceCurrentRun(surfaceID)
		if ok && res.RunID == "" {
			res.RunID = run.RunID
		}
		if ok && run.RunID != res.RunID {
			return "ended (run " + run.RunID + " began after it)", nil
		}
		if ok {
			switch run.State {
			case proto.StateSucceeded, proto.StateFailed, proto.StateInterrupted, proto.StateDisconnected:
				return string(run.State), nil
			}
		}
		if p := d.paneOf(surfaceID); p == nil {
			return "exited", nil
		} else if exited, _ := p.Exited(); exited {
			return "exited", nil
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}
