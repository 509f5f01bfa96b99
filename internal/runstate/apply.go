package runstate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// At is the time the reducer orders an event by: its occurredAt, but never
// later than its receipt. The client's date orders events that arrive out of
// order; it cannot make an event newer than the moment the daemon saw it, so a
// client that dates an event in the future cannot pin its run as current or
// make the events that follow it late. The evidence keeps the client's date.
func (ev Event) At() time.Time {
	if !ev.ReceivedAt.IsZero() && ev.ReceivedAt.Before(ev.OccurredAt) {
		return ev.ReceivedAt
	}
	return ev.OccurredAt
}

// advance is the transition of one run: the effect ev has on base (nil for
// a run not seen yet) and, when the run changes, the run after it. A
// touched run gets seq as its arrival order.
func advance(base *Run, ev Event, seq uint64) (Effect, *Run) {
	at := ev.At()
	target := StateFor(ev.Kind)
	switch {
	case target == "":
		// Not a wire kind; callers validate, but never panic on it.
		return EffectFinal, nil
	case base == nil:
		r := &Run{
			SessionID: ev.SessionID, RunID: ev.RunID, SurfaceID: ev.SurfaceID,
			Provider: ev.Provider, NativeSessionID: ev.NativeSessionID, State: target,
			StartedAt: at, UpdatedAt: at, ImpliedStart: ev.Kind != proto.KindStarted, Seq: seq,
			Because: evidenceOf(ev), Last: evidenceOf(ev),
		}
		if Terminal(target) {
			r.EndedAt = at
		}
		return EffectApplied, r
	case Terminal(base.State):
		return EffectFinal, nil
	case at.Before(base.UpdatedAt) && !Terminal(target):
		if !at.Before(base.StartedAt) {
			return EffectLate, nil
		}
		r := *base
		r.StartedAt = at
		if ev.Kind == proto.KindStarted {
			r.ImpliedStart = false
		}
		return EffectLate, &r
	case ev.Kind == proto.KindStarted || target == base.State:
		r := *base
		touch(&r, ev, at, seq)
		if ev.Kind == proto.KindStarted && !at.After(r.StartedAt) {
			r.StartedAt, r.ImpliedStart = at, false
		}
		return EffectConfirmed, &r
	}
	r := *base
	touch(&r, ev, at, seq)
	r.State = target
	r.Because = evidenceOf(ev)
	if at.Before(r.StartedAt) {
		r.StartedAt = at
	}
	if Terminal(target) {
		r.EndedAt = at
	}
	return EffectApplied, &r
}

func touch(r *Run, ev Event, at time.Time, seq uint64) {
	r.Seq = seq
	if at.After(r.UpdatedAt) {
		r.UpdatedAt = at
	}
	r.Last = evidenceOf(ev)
	if ev.NativeSessionID != "" {
		r.NativeSessionID = ev.NativeSessionID
	}
	r.SurfaceID = ev.SurfaceID
}

// Apply reduces one newly accepted event. It must be called once per event
// id, in the order the events were recorded: idempotency is the caller's
// job (the store refuses a known id).
func (b *Board) Apply(ev Event) Result {
	k := RunKey{ev.SessionID, ev.RunID}
	at := ev.At()
	s := b.sessions[ev.SessionID]
	if s == nil {
		s = &session{}
		b.sessions[ev.SessionID] = s
	}
	if !at.Before(s.lastEventAt) {
		s.lastEventAt = at
		s.surfaceID = ev.SurfaceID
		if ev.NativeSessionID != "" {
			s.nativeSessionID = ev.NativeSessionID
		}
	} else if s.nativeSessionID == "" {
		s.nativeSessionID = ev.NativeSessionID
	}

	var res Result
	base := b.runs[k]
	if base != nil {
		res.Prev, res.Run = base.State, *base
	}
	eff, r := advance(base, ev, b.seq+1)
	res.Effect = eff
	if r == nil {
		return res
	}
	if r.Seq > b.seq {
		b.seq = r.Seq
	}
	b.runs[k] = r
	b.dirtyRuns[k] = struct{}{}
	res.Run = *r
	if eff != EffectApplied && eff != EffectConfirmed {
		return res
	}

	// The current run of the session and of the surface.
	if cur, ok := b.runs[s.current]; !s.hasCurrent || !ok || newer(r, cur) >= 0 {
		if s.hasCurrent && s.current != k {
			for _, id := range sortedIDs(b.open[s.current]) {
				res.Resolved = append(res.Resolved, b.resolve(id, ev.ReceivedAt, ResolvedSuperseded))
			}
		}
		if !s.hasCurrent || s.current != k {
			res.Resolved = append(res.Resolved, b.resolveNotice(ev.SessionID, ev.ReceivedAt, ResolvedSuperseded)...)
		}
		s.current, s.hasCurrent = k, true
	}
	if sk, ok := b.surfaces[r.SurfaceID]; !ok || sk == k {
		b.surfaces[r.SurfaceID] = k
	} else if cur, ok := b.runs[sk]; !ok || newer(r, cur) >= 0 {
		b.surfaces[r.SurfaceID] = k
	}
	if eff != EffectApplied {
		return res
	}

	// The run moved: items for what it no longer is resolve; what it now is
	// may open one.
	want := reasonFor(r.State)
	for _, id := range sortedIDs(b.open[k]) {
		if b.items[id].Reason != want {
			res.Resolved = append(res.Resolved, b.resolve(id, ev.ReceivedAt, resolvedMovedOn(r.State)))
		}
	}
	if s.current != k || want == "" || b.open[k][want] != 0 {
		return res
	}
	msg := ev.Message
	if want == proto.KindSucceeded {
		d := r.EndedAt.Sub(r.StartedAt)
		if d < b.rules.LongRun {
			return res
		}
		if msg == "" {
			msg = "finished after " + d.Round(time.Second).String()
		}
	}
	if msg == "" {
		msg = defaultMessage(want)
	}
	it := &Item{
		ID: b.nextItem, SessionID: r.SessionID, SurfaceID: r.SurfaceID, RunID: r.RunID,
		Provider: r.Provider, Reason: want, Message: msg, EventID: ev.ID, OpenedAt: at,
	}
	b.nextItem++
	b.items[it.ID] = it
	b.dirtyItems[it.ID] = struct{}{}
	if b.open[k] == nil {
		b.open[k] = map[proto.EventKind]int64{}
	}
	b.open[k][want] = it.ID
	res.Opened = append(res.Opened, *it)
	if want == proto.KindApprovalRequested || want == proto.KindInputRequested {
		res.Resolved = append(res.Resolved, b.resolveNotice(r.SessionID, ev.ReceivedAt, ResolvedByRequest)...)
	} else {
		res.Resolved = append(res.Resolved, b.resolveRunNotice(r.SessionID, r.RunID, ev.ReceivedAt)...)
	}
	return res
}

// Preview classifies events against the board without changing it: the
// effect each would have if the events were applied in order. The event
// writer stores that effect with each event before it commits, and applies
// the events once they are committed.
type Preview struct {
	b    *Board
	runs map[RunKey]*Run
}

// Preview starts a preview over the board as it is now.
func (b *Board) Preview() *Preview { return &Preview{b: b, runs: map[RunKey]*Run{}} }

func (p *Preview) run(k RunKey) *Run {
	if r, ok := p.runs[k]; ok {
		return r
	}
	return p.b.runs[k]
}

// Effect returns the effect ev would have after the events added so far.
func (p *Preview) Effect(ev Event) Effect {
	eff, _ := advance(p.run(RunKey{ev.SessionID, ev.RunID}), ev, 0)
	return eff
}

// Add counts ev as applied for the events that follow it.
func (p *Preview) Add(ev Event) {
	k := RunKey{ev.SessionID, ev.RunID}
	if _, r := advance(p.run(k), ev, 0); r != nil {
		p.runs[k] = r
	}
}

func (b *Board) resolve(id int64, at time.Time, why string) Item {
	it := b.items[id]
	it.ResolvedAt = at
	it.Resolution = why
	b.dirtyItems[id] = struct{}{}
	k := it.openKey()
	if m := b.open[k]; m[it.Reason] == id {
		delete(m, it.Reason)
		if len(m) == 0 {
			delete(b.open, k)
		}
	}
	return *it
}

// reasonFor is the attention reason a state would raise.
func reasonFor(s proto.RunState) proto.EventKind {
	switch s {
	case proto.StateWaitingApproval:
		return proto.KindApprovalRequested
	case proto.StateWaitingInput:
		return proto.KindInputRequested
	case proto.StateFailed:
		return proto.KindFailed
	case proto.StateDisconnected:
		return proto.KindDisconnected
	case proto.StateSucceeded:
		return proto.KindSucceeded
	}
	return ""
}

func defaultMessage(reason proto.EventKind) string {
	switch reason {
	case proto.KindApprovalRequested:
		return "needs approval"
	case proto.KindInputRequested:
		return "waiting for input"
	case proto.KindFailed:
		return "the run failed"
	case proto.KindDisconnected:
		return "the agent disconnected"
	}
	return string(reason)
}

func sortedIDs(m map[proto.EventKind]int64) []int64 {
	ids := make([]int64, 0, len(m))
	for _, id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// ErrNoItem is returned by Ack for an unknown item id.
var ErrNoItem = errors.New("no such attention item")

// Ack resolves an open item as acknowledged. Acknowledging a resolved item
// changes nothing and reports changed=false.
func (b *Board) Ack(id int64, now time.Time) (it Item, changed bool, err error) {
	cur, ok := b.items[id]
	if !ok {
		return Item{}, false, fmt.Errorf("ack item %d: %w", id, ErrNoItem)
	}
	if !cur.Open() {
		return *cur, false, nil
	}
	return b.resolve(id, now, ResolvedAcknowledged), true, nil
}

// AckAll acknowledges every open item.
func (b *Board) AckAll(now time.Time) []Item {
	var ids []int64
	for _, m := range b.open {
		for _, id := range m {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	out := make([]Item, 0, len(ids))
	for _, id := range ids {
		out = append(out, b.resolve(id, now, ResolvedAcknowledged))
	}
	return out
}

// Prune forgets items resolved at least ResolvedTTL ago, and ended runs
// older than RunRetention that are no longer current anywhere.
func (b *Board) Prune(now time.Time) {
	for id, it := range b.items {
		if !it.Open() && now.Sub(it.ResolvedAt) >= b.rules.ResolvedTTL {
			b.deleteItem(id)
		}
	}
	for k, r := range b.runs {
		if !Terminal(r.State) || now.Sub(r.EndedAt) < b.rules.RunRetention {
			continue
		}
		if s := b.sessions[k.SessionID]; s != nil && s.hasCurrent && s.current == k {
			continue
		}
		if len(b.open[k]) > 0 {
			continue
		}
		b.deleteRun(k)
	}
}

func (b *Board) deleteItem(id int64) {
	it, ok := b.items[id]
	if !ok {
		return
	}
	k := it.openKey()
	if m := b.open[k]; m[it.Reason] == id {
		delete(m, it.Reason)
		if len(m) == 0 {
			delete(b.open, k)
		}
	}
	delete(b.items, id)
	b.dirtyItems[id] = struct{}{}
}

func (b *Board) deleteRun(k RunKey) {
	r, ok := b.runs[k]
	if !ok {
		return
	}
	if sk, ok := b.surfaces[r.SurfaceID]; ok && sk == k {
		delete(b.surfaces, r.SurfaceID)
	}
	delete(b.runs, k)
	b.dirtyRuns[k] = struct{}{}
}

// RemoveSession forgets a session with its runs and items.
func (b *Board) RemoveSession(id string) {
	for k := range b.runs {
		if k.SessionID == id {
			b.deleteRun(k)
		}
	}
	for iid, it := range b.items {
		if it.SessionID == id {
			b.deleteItem(iid)
		}
	}
	for k := range b.open {
		if k.SessionID == id {
			delete(b.open, k)
		}
	}
	delete(b.sessions, id)
}

// Changes lists what changed on a board since the last ClearChanges, for
// persisting.
type Changes struct {
	Runs         []Run    // created or modified
	DeletedRuns  []RunKey // forgotten
	Items        []Item   // created or modified
	DeletedItems []int64
}

// Empty reports whether there is nothing to persist.
func (c Changes) Empty() bool {
	return len(c.Runs)+len(c.DeletedRuns)+len(c.Items)+len(c.DeletedItems) == 0
}

// Dirty is how many runs and items changed since the last ClearChanges.
func (b *Board) Dirty() int { return len(b.dirtyRuns) + len(b.dirtyItems) }

// ClearChanges forgets what changed, once it is persisted.
func (b *Board) ClearChanges() {
	clear(b.dirtyRuns)
	clear(b.dirtyItems)
}

// Changes returns what changed since the last ClearChanges: runs by key,
// items by id.
func (b *Board) Changes() Changes {
	var c Changes
	for k := range b.dirtyRuns {
		if r, ok := b.runs[k]; ok {
			c.Runs = append(c.Runs, *r)
		} else {
			c.DeletedRuns = append(c.DeletedRuns, k)
		}
	}
	for id := range b.dirtyItems {
		if it, ok := b.items[id]; ok {
			c.Items = append(c.Items, *it)
		} else {
			c.DeletedItems = append(c.DeletedItems, id)
		}
	}
	byKey := func(x, y RunKey) int {
		return cmp.Or(cmp.Compare(x.SessionID, y.SessionID), cmp.Compare(x.RunID, y.RunID))
	}
	slices.SortFunc(c.Runs, func(x, y Run) int { return byKey(x.Key(), y.Key()) })
	slices.SortFunc(c.DeletedRuns, byKey)
	slices.SortFunc(c.Items, func(x, y Item) int { return cmp.Compare(x.ID, y.ID) })
	slices.Sort(c.DeletedItems)
	return c
}
