package events

import (
	"context"
	"slices"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/runstate"
)

// RegisterControl registers the engine's control ops (attention, ack,
// wait, explain) into m, the daemon's one dispatcher of control.sock. Wait
// blocks until the states are reached, the timeout passes, a session
// disappears or ctx ends: the daemon cancels ctx when the client goes away.
func (e *Engine) RegisterControl(m *proto.Mux) {
	proto.Handle(m, proto.OpAttention, func(_ context.Context, a proto.AttentionArgs) ([]proto.AttentionItem, error) {
		return e.Attention(a)
	})
	proto.Handle(m, proto.OpAck, e.Ack)
	proto.Handle(m, proto.OpWait, e.Wait)
	proto.Handle(m, proto.OpExplain, func(ctx context.Context, a proto.Target) (proto.Explanation, error) {
		return e.Explain(ctx, a.Name)
	})
}

func (e *Engine) checkStarted() error {
	if !e.started.Load() {
		return proto.Errorf(proto.CodeUnsupported, "%v", ErrNotStarted)
	}
	return nil
}

func (e *Engine) name(id string) (string, bool) {
	if e.cfg.Resolver == nil {
		return "", true
	}
	return e.cfg.Resolver.SessionName(id)
}

func (e *Engine) resolve(name string) (string, error) {
	if e.cfg.Resolver == nil {
		return "", proto.Errorf(proto.CodeUnsupported, "sessions cannot be looked up by name")
	}
	id, ok := e.cfg.Resolver.SessionByName(name)
	if !ok {
		pe := proto.Errorf(proto.CodeNotFound, "no session named %q", name)
		pe.Hint = "run `muster ls` to see session names"
		return "", pe
	}
	return id, nil
}

// Attention lists the attention drawer: open items, and with All also
// those resolved within the last 24 hours; oldest first.
func (e *Engine) Attention(a proto.AttentionArgs) ([]proto.AttentionItem, error) {
	if err := e.checkStarted(); err != nil {
		return nil, err
	}
	now := e.now()
	e.mu.RLock()
	items := e.board.Items(now, a.All)
	e.mu.RUnlock()
	out := make([]proto.AttentionItem, 0, len(items))
	for _, it := range items {
		name, _ := e.name(it.SessionID)
		out = append(out, wireItem(it, name))
	}
	return out, nil
}

func wireItem(it runstate.Item, name string) proto.AttentionItem {
	w := proto.AttentionItem{
		ID: it.ID, SessionID: it.SessionID, SessionName: name, SurfaceID: it.SurfaceID, RunID: it.RunID,
		Provider: it.Provider, Reason: string(it.Reason), Message: it.Message, EventID: it.EventID,
		OpenedAt: formatTime(it.OpenedAt), Open: it.Open(), Resolution: it.Resolution,
	}
	if !it.Open() {
		at := formatTime(it.ResolvedAt)
		w.ResolvedAt = &at
	}
	return w
}

// Ack acknowledges attention items. Unknown ids fail the whole request and
// change nothing; items already resolved are listed under Already.
func (e *Engine) Ack(ctx context.Context, a proto.AckArgs) (proto.AckResult, error) {
	if err := e.checkStarted(); err != nil {
		return proto.AckResult{}, err
	}
	if a.All == (len(a.IDs) > 0) {
		return proto.AckResult{}, proto.Errorf(proto.CodeBadRequest, "ack needs item ids or all, not both or neither")
	}
	o := e.submit(&pending{op: func(b *runstate.Board) ([]runstate.Event, any, error) {
		now := e.now()
		res := proto.AckResult{Acknowledged: []int64{}, Already: []int64{}}
		if a.All {
			for _, it := range b.AckAll(now) {
				res.Acknowledged = append(res.Acknowledged, it.ID)
			}
			return nil, res, nil
		}
		for _, id := range a.IDs {
			if _, ok := b.Item(id); !ok {
				return nil, nil, proto.Errorf(proto.CodeNotFound, "no attention item %d", id)
			}
		}
		for _, id := range a.IDs {
			_, changed, err := b.Ack(id, now)
			if err != nil {
				return nil, nil, err
			}
			if changed {
				res.Acknowledged = append(res.Acknowledged, id)
			} else if !slices.Contains(res.Already, id) && !slices.Contains(res.Acknowledged, id) {
				res.Already = append(res.Already, id)
			}
		}
		return nil, res, nil
	}})
	if o.err != nil {
		return proto.AckResult{}, o.err
	}
	if o.code != "" {
		return proto.AckResult{}, proto.Errorf(proto.CodeInternal, "ack: %s", o.code)
	}
	return o.val.(proto.AckResult), nil
}

// Wait blocks until the named sessions reach one of the states (all of
// them, or any one with a.Any), the timeout passes (Status timeout), or a
// session disappears (Status gone; with a.Any, once all have). It checks
// the current state first. A session matches a terminal state also once it
// has turned idle after it. `done` is also reached by a pane that exited
// or is restorable (PaneResolver); `waiting` covers a turn that ended and
// left the agent at its prompt (proto.WaitGroupWaiting).
func (e *Engine) Wait(ctx context.Context, a proto.WaitArgs) (proto.WaitResult, error) {
	if err := e.checkStarted(); err != nil {
		return proto.WaitResult{}, err
	}
	lister, _ := e.cfg.Resolver.(SessionLister)
	everyone := len(a.Names) == 0 && a.Any
	if len(a.Names) == 0 && (!a.Any || lister == nil) {
		return proto.WaitResult{}, proto.Errorf(proto.CodeBadRequest, "wait needs at least one session name, or --any for every session")
	}
	if a.TimeoutMS < 0 {
		return proto.WaitResult{}, proto.Errorf(proto.CodeBadRequest, "wait timeout must not be negative")
	}
	states, attention, err := proto.ExpandWaitStates(a.Until)
	if err != nil {
		return proto.WaitResult{}, proto.Errorf(proto.CodeInvalid, "%v", err)
	}
	ids := make([]string, len(a.Names))
	for i, n := range a.Names {
		if ids[i], err = e.resolve(n); err != nil {
			return proto.WaitResult{}, err
		}
	}
	// Every session: those there now and those made while it waits.
	every := func() {
		if everyone {
			ids, a.Names = ids[:0], a.Names[:0]
			for _, s := range lister.Sessions() {
				ids, a.Names = append(ids, s.ID), append(a.Names, s.Name)
			}
		}
	}
	var deadline <-chan time.Time
	if a.TimeoutMS > 0 {
		t := time.NewTimer(time.Duration(a.TimeoutMS) * time.Millisecond)
		defer t.Stop()
		deadline = t.C
	}
	for {
		every()
		res, wake, changed := e.waitCheck(a, ids, states, attention)
		if res.Status != "" {
			return res, nil
		}
		var timer *time.Timer
		var ring <-chan time.Time
		if !wake.IsZero() {
			timer = time.NewTimer(max(wake.Sub(e.now()), time.Millisecond))
			ring = timer.C
		}
		select {
		case <-changed:
		case <-ring:
		case <-deadline:
			every()
			res, _, _ := e.waitCheck(a, ids, states, attention)
			if res.Status == "" {
				res.Status = proto.WaitTimeout
			}
			return res, nil
		case <-ctx.Done():
			return proto.WaitResult{}, ctx.Err()
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// waitCheck evaluates a wait now. Status is empty while it must go on;
// wake is when a derived state (idle) will next change.
func (e *Engine) waitCheck(a proto.WaitArgs, ids []string, states []proto.RunState, attention bool) (proto.WaitResult, time.Time, <-chan struct{}) {
	isGone := make([]bool, len(ids))
	panes := make([]string, len(ids))
	codes := make([]*int, len(ids))
	pr, _ := e.cfg.Resolver.(PaneResolver)
	for i, id := range ids {
		_, ok := e.name(id)
		isGone[i] = !ok
		if pr != nil {
			panes[i], codes[i] = pr.PaneOf(id)
		}
	}
	done := slices.Contains(a.Until, proto.WaitGroupDone)
	now := e.now()
	res := proto.WaitResult{Sessions: make([]proto.WaitSession, len(ids))}
	var wake time.Time
	reached, gone := 0, 0
	e.mu.RLock()
	changed := e.changed
	for i, id := range ids {
		v := e.board.Session(id, now)
		s := proto.WaitSession{Name: a.Names[i], SessionID: id, State: string(v.State), RunID: v.Run.RunID, Attention: v.OpenItems,
			Pane: panes[i], ExitCode: codes[i]}
		paneOver := panes[i] == proto.PaneExited || panes[i] == proto.PaneRestorable
		if v.State == proto.StateIdle {
			s.Terminal = string(v.Terminal)
		}
		s.Gone = isGone[i] || e.removed[id]
		if s.Gone {
			gone++
		}
		s.Reached = !s.Gone && ((attention && v.OpenItems > 0) || (done && paneOver) ||
			(v.State != "" && (slices.Contains(states, v.State) || (v.State == proto.StateIdle && slices.Contains(states, v.Terminal)))))
		if s.Reached {
			reached++
		}
		if v.HasRun && v.State != proto.StateIdle && !v.IdleAt.IsZero() && (wake.IsZero() || v.IdleAt.Before(wake)) {
			wake = v.IdleAt
		}
		res.Sessions[i] = s
	}
	e.mu.RUnlock()
	// All: one gone session can never be reached. Any: the others may be.
	switch {
	case a.Any && reached > 0, !a.Any && reached == len(ids):
		res.Status = proto.WaitReached
	case a.Any && len(ids) > 0 && gone == len(ids), !a.Any && gone > 0:
		res.Status = proto.WaitGone
	}
	return res, wake, changed
}

// Explain says why a session is in its state: the current run, the event
// that put it there and the newest one, open items, and recent events.
func (e *Engine) Explain(ctx context.Context, name string) (proto.Explanation, error) {
	if err := e.checkStarted(); err != nil {
		return proto.Explanation{}, err
	}
	if name == "" {
		return proto.Explanation{}, proto.Errorf(proto.CodeBadRequest, "explain needs a session name")
	}
	id, err := e.resolve(name)
	if err != nil {
		return proto.Explanation{}, err
	}
	now := e.now()
	e.mu.RLock()
	v := e.board.Session(id, now)
	var items []runstate.Item
	for _, it := range e.board.Items(now, false) {
		if it.SessionID == id {
			items = append(items, it)
		}
	}
	e.mu.RUnlock()
	x := proto.Explanation{
		SessionID: id, Name: name, NativeSessionID: v.NativeSessionID, SurfaceID: v.SurfaceID,
		Attention: []proto.AttentionItem{}, Events: []proto.EventRecord{},
	}
	if v.HasRun {
		st, rid, started := string(v.State), v.Run.RunID, formatTime(v.Run.StartedAt)
		x.State, x.RunID, x.RunStartedAt = &st, &rid, &started
		x.ImpliedStart = v.Run.ImpliedStart
		if !v.Run.EndedAt.IsZero() {
			ended := formatTime(v.Run.EndedAt)
			x.RunEndedAt = &ended
			idle := formatTime(v.IdleAt)
			x.IdleAt = &idle
			x.Terminal = string(v.Terminal)
		}
		b, l := wireEvidence(v.Run.Because), wireEvidence(v.Run.Last)
		x.Because, x.Last = &b, &l
	}
	for _, it := range items {
		x.Attention = append(x.Attention, wireItem(it, name))
	}
	if p := e.cfg.Panes; p != nil {
		if a, ok := p.PaneActivity(id); ok {
			x.Activity = &a
		}
		if c, ok := p.PaneCost(id); ok {
			x.Cost = &c
		}
		if l, ok := p.PaneLimit(id); ok {
			x.Limit = &l
		}
	}
	rows, err := e.store.SessionEvents(ctx, id, 20)
	if err != nil {
		return proto.Explanation{}, proto.Errorf(proto.CodeInternal, "explain %s: %v", name, err)
	}
	for _, r := range rows {
		x.Events = append(x.Events, proto.EventRecord{
			Seq: r.Seq, RunID: r.RunID, Effect: r.Effect,
			Evidence: proto.Evidence{
				EventID: r.ID, Kind: r.Kind, HookName: r.HookName, Provider: r.Provider, Source: r.Source,
				Message: r.Message, OccurredAt: formatTime(r.OccurredAt), ReceivedAt: formatTime(r.ReceivedAt),
			},
		})
	}
	return x, nil
}

func wireEvidence(ev runstate.Evidence) proto.Evidence {
	return proto.Evidence{
		EventID: ev.EventID, Kind: string(ev.Kind), HookName: ev.HookName, Provider: ev.Provider,
		Source: string(ev.Source), Message: ev.Message, OccurredAt: formatTime(ev.OccurredAt),
		ReceivedAt: formatTime(ev.ReceivedAt),
	}
}
