package runstate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// Tx is a set of changes to a Board that becomes visible only on Commit.
// Until then the board is unchanged, so readers never see state whose events
// are not yet durable, and a failed commit is simply dropped. Only one Tx
// may be open on a board at a time.
type Tx struct {
	b        *Board
	runs     map[RunKey]*Run
	runDel   map[RunKey]bool
	sessions map[string]*session
	sessDel  map[string]bool
	surfaces map[string]*RunKey // nil value: surface forgotten
	items    map[int64]*Item
	itemDel  map[int64]bool
	open     map[RunKey]map[proto.EventKind]int64
	nextItem int64
	seq      uint64
	runOrder []RunKey
	itmOrder []int64
	replay   bool // runs only: attention items are left as loaded
}

// BeginReplay starts a transaction that re-applies events whose attention
// effects are already persisted: it moves runs and sessions exactly as
// Apply does, and leaves attention items as they were loaded.
func (b *Board) BeginReplay() *Tx {
	t := b.Begin()
	t.replay = true
	return t
}

// Begin starts a transaction.
func (b *Board) Begin() *Tx {
	return &Tx{
		b:        b,
		runs:     map[RunKey]*Run{},
		runDel:   map[RunKey]bool{},
		sessions: map[string]*session{},
		sessDel:  map[string]bool{},
		surfaces: map[string]*RunKey{},
		items:    map[int64]*Item{},
		itemDel:  map[int64]bool{},
		open:     map[RunKey]map[proto.EventKind]int64{},
		nextItem: b.nextItem,
		seq:      b.seq,
	}
}

func (t *Tx) getRun(k RunKey) (*Run, bool) {
	if r, ok := t.runs[k]; ok {
		return r, true
	}
	if t.runDel[k] {
		return nil, false
	}
	r, ok := t.b.runs[k]
	return r, ok
}

func (t *Tx) mutRun(k RunKey) *Run {
	if r, ok := t.runs[k]; ok {
		return r
	}
	c := *t.b.runs[k]
	t.putRun(&c)
	return &c
}

func (t *Tx) putRun(r *Run) {
	k := r.Key()
	if _, ok := t.runs[k]; !ok {
		t.runOrder = append(t.runOrder, k)
	}
	delete(t.runDel, k)
	t.runs[k] = r
}

func (t *Tx) getSession(id string) *session {
	if s, ok := t.sessions[id]; ok {
		return s
	}
	if t.sessDel[id] {
		return nil
	}
	return t.b.sessions[id]
}

func (t *Tx) mutSession(id string) *session {
	if s, ok := t.sessions[id]; ok {
		return s
	}
	c := session{}
	if s := t.getSession(id); s != nil {
		c = *s
	}
	delete(t.sessDel, id)
	t.sessions[id] = &c
	return &c
}

func (t *Tx) getSurface(id string) (RunKey, bool) {
	if k, ok := t.surfaces[id]; ok {
		if k == nil {
			return RunKey{}, false
		}
		return *k, true
	}
	k, ok := t.b.surfaces[id]
	return k, ok
}

func (t *Tx) getItem(id int64) (*Item, bool) {
	if it, ok := t.items[id]; ok {
		return it, true
	}
	if t.itemDel[id] {
		return nil, false
	}
	it, ok := t.b.items[id]
	return it, ok
}

func (t *Tx) mutItem(id int64) *Item {
	if it, ok := t.items[id]; ok {
		return it
	}
	c := *t.b.items[id]
	t.putItem(&c)
	return &c
}

func (t *Tx) putItem(it *Item) {
	if _, ok := t.items[it.ID]; !ok {
		t.itmOrder = append(t.itmOrder, it.ID)
	}
	t.items[it.ID] = it
}

func (t *Tx) openOf(k RunKey) map[proto.EventKind]int64 {
	if m, ok := t.open[k]; ok {
		return m
	}
	return t.b.open[k]
}

func (t *Tx) mutOpen(k RunKey) map[proto.EventKind]int64 {
	if m, ok := t.open[k]; ok {
		return m
	}
	m := map[proto.EventKind]int64{}
	for r, id := range t.b.open[k] {
		m[r] = id
	}
	t.open[k] = m
	return m
}

func (t *Tx) resolve(id int64, at time.Time, why string) Item {
	it := t.mutItem(id)
	it.ResolvedAt = at
	it.Resolution = why
	m := t.mutOpen(RunKey{it.SessionID, it.RunID})
	if m[it.Reason] == id {
		delete(m, it.Reason)
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

// Apply reduces one newly accepted event. It must be called once per event
// id: idempotency is the caller's job (the store refuses a known id).
func (t *Tx) Apply(ev Event) Result {
	k := RunKey{ev.SessionID, ev.RunID}
	target := StateFor(ev.Kind)
	s := t.mutSession(ev.SessionID)
	if !ev.OccurredAt.Before(s.lastEventAt) {
		s.lastEventAt = ev.OccurredAt
		s.surfaceID = ev.SurfaceID
		if ev.NativeSessionID != "" {
			s.nativeSessionID = ev.NativeSessionID
		}
	} else if s.nativeSessionID == "" {
		s.nativeSessionID = ev.NativeSessionID
	}

	var res Result
	base, exists := t.getRun(k)
	switch {
	case target == "":
		// Not a wire kind; callers validate, but never panic on it.
		res.Effect = EffectFinal
		if exists {
			res.Prev, res.Run = base.State, *base
		}
		return res
	case !exists:
		t.seq++
		r := &Run{
			SessionID: ev.SessionID, RunID: ev.RunID, SurfaceID: ev.SurfaceID,
			Provider: ev.Provider, NativeSessionID: ev.NativeSessionID, State: target,
			StartedAt: ev.OccurredAt, UpdatedAt: ev.OccurredAt,
			ImpliedStart: ev.Kind != proto.KindStarted, Seq: t.seq,
			Because: evidenceOf(ev), Last: evidenceOf(ev),
		}
		if Terminal(target) {
			r.EndedAt = ev.OccurredAt
		}
		t.putRun(r)
		res.Effect = EffectApplied
	case Terminal(base.State):
		res.Prev, res.Effect = base.State, EffectFinal
	case ev.OccurredAt.Before(base.UpdatedAt) && !Terminal(target):
		res.Prev, res.Effect = base.State, EffectLate
		if ev.OccurredAt.Before(base.StartedAt) {
			r := t.mutRun(k)
			r.StartedAt = ev.OccurredAt
			if ev.Kind == proto.KindStarted {
				r.ImpliedStart = false
			}
		}
	case ev.Kind == proto.KindStarted || target == base.State:
		res.Prev, res.Effect = base.State, EffectConfirmed
		r := t.mutRun(k)
		t.touch(r, ev)
		if ev.Kind == proto.KindStarted && !ev.OccurredAt.After(r.StartedAt) {
			r.StartedAt, r.ImpliedStart = ev.OccurredAt, false
		}
	default:
		res.Prev, res.Effect = base.State, EffectApplied
		r := t.mutRun(k)
		t.touch(r, ev)
		r.State = target
		r.Because = evidenceOf(ev)
		if ev.OccurredAt.Before(r.StartedAt) {
			r.StartedAt = ev.OccurredAt
		}
		if Terminal(target) {
			r.EndedAt = ev.OccurredAt
		}
	}
	r, _ := t.getRun(k)
	res.Run = *r
	if res.Effect != EffectApplied && res.Effect != EffectConfirmed {
		return res
	}

	// The current run of the session and of the surface.
	if cur, ok := t.getRun(s.current); !s.hasCurrent || !ok || newer(r, cur) >= 0 {
		if s.hasCurrent && s.current != k && !t.replay {
			for _, id := range sortedIDs(t.openOf(s.current)) {
				res.Resolved = append(res.Resolved, t.resolve(id, ev.ReceivedAt, ResolvedSuperseded))
			}
		}
		s.current, s.hasCurrent = k, true
	}
	if sk, ok := t.getSurface(r.SurfaceID); !ok || sk == k {
		kk := k
		t.surfaces[r.SurfaceID] = &kk
	} else if cur, ok := t.getRun(sk); !ok || newer(r, cur) >= 0 {
		kk := k
		t.surfaces[r.SurfaceID] = &kk
	}
	if res.Effect != EffectApplied || t.replay {
		return res
	}

	// The run moved: items for what it no longer is resolve; what it now is
	// may open one.
	want := reasonFor(r.State)
	for _, id := range sortedIDs(t.openOf(k)) {
		it, _ := t.getItem(id)
		if it.Reason != want {
			res.Resolved = append(res.Resolved, t.resolve(id, ev.ReceivedAt, resolvedMovedOn(r.State)))
		}
	}
	if s.current != k || want == "" || t.openOf(k)[want] != 0 {
		return res
	}
	msg := ev.Message
	if want == proto.KindSucceeded {
		d := r.EndedAt.Sub(r.StartedAt)
		if d < t.b.rules.LongRun {
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
		ID: t.nextItem, SessionID: r.SessionID, SurfaceID: r.SurfaceID, RunID: r.RunID,
		Provider: r.Provider, Reason: want, Message: msg, EventID: ev.ID, OpenedAt: ev.OccurredAt,
	}
	t.nextItem++
	t.putItem(it)
	t.mutOpen(k)[want] = it.ID
	res.Opened = append(res.Opened, *it)
	return res
}

// Classify returns the effect Apply would have, without changing anything,
// so that a caller can store it with the event before applying.
func (t *Tx) Classify(ev Event) Effect {
	base, exists := t.getRun(RunKey{ev.SessionID, ev.RunID})
	return classify(base, exists, ev)
}

func classify(base *Run, exists bool, ev Event) Effect {
	target := StateFor(ev.Kind)
	switch {
	case target == "":
		return EffectFinal
	case !exists:
		return EffectApplied
	case Terminal(base.State):
		return EffectFinal
	case ev.OccurredAt.Before(base.UpdatedAt) && !Terminal(target):
		return EffectLate
	case ev.Kind == proto.KindStarted || target == base.State:
		return EffectConfirmed
	}
	return EffectApplied
}

func (t *Tx) touch(r *Run, ev Event) {
	t.seq++
	r.Seq = t.seq
	if ev.OccurredAt.After(r.UpdatedAt) {
		r.UpdatedAt = ev.OccurredAt
	}
	r.Last = evidenceOf(ev)
	if ev.NativeSessionID != "" {
		r.NativeSessionID = ev.NativeSessionID
	}
	r.SurfaceID = ev.SurfaceID
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
func (t *Tx) Ack(id int64, now time.Time) (it Item, changed bool, err error) {
	cur, ok := t.getItem(id)
	if !ok {
		return Item{}, false, fmt.Errorf("ack item %d: %w", id, ErrNoItem)
	}
	if !cur.Open() {
		return *cur, false, nil
	}
	return t.resolve(id, now, ResolvedAcknowledged), true, nil
}

// AckAll acknowledges every open item.
func (t *Tx) AckAll(now time.Time) []Item {
	var ids []int64
	for _, m := range t.b.open {
		for _, id := range m {
			ids = append(ids, id)
		}
	}
	for k, m := range t.open {
		_ = k
		for _, id := range m {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var out []Item
	for _, id := range ids {
		if it, ok := t.getItem(id); ok && it.Open() {
			out = append(out, t.resolve(id, now, ResolvedAcknowledged))
		}
	}
	return out
}

// Prune forgets items resolved at least ResolvedTTL ago, and ended runs
// older than RunRetention that are no longer current anywhere.
func (t *Tx) Prune(now time.Time) {
	for id, it := range t.b.items {
		if cur, ok := t.getItem(id); ok {
			it = cur
		}
		if !it.Open() && now.Sub(it.ResolvedAt) >= t.b.rules.ResolvedTTL {
			t.deleteItem(id)
		}
	}
	for k, r := range t.b.runs {
		if !Terminal(r.State) || now.Sub(r.EndedAt) < t.b.rules.RunRetention {
			continue
		}
		if s := t.getSession(k.SessionID); s != nil && s.hasCurrent && s.current == k {
			continue
		}
		if len(t.openOf(k)) > 0 {
			continue
		}
		t.deleteRun(k)
	}
}

func (t *Tx) deleteItem(id int64) {
	if _, ok := t.items[id]; !ok {
		t.itmOrder = append(t.itmOrder, id)
	}
	delete(t.items, id)
	t.itemDel[id] = true
}

func (t *Tx) deleteRun(k RunKey) {
	r, ok := t.getRun(k)
	if !ok {
		return
	}
	if sk, ok := t.getSurface(r.SurfaceID); ok && sk == k {
		t.surfaces[r.SurfaceID] = nil
	}
	if _, ok := t.runs[k]; !ok {
		t.runOrder = append(t.runOrder, k)
	}
	delete(t.runs, k)
	t.runDel[k] = true
}

// RemoveSession forgets a session with its runs and items.
func (t *Tx) RemoveSession(id string) {
	for k := range t.b.runs {
		if k.SessionID == id {
			t.deleteRun(k)
		}
	}
	for k := range t.runs {
		if k.SessionID == id {
			t.deleteRun(k)
		}
	}
	for iid, it := range t.b.items {
		if it.SessionID == id {
			t.deleteItem(iid)
		}
	}
	for iid, it := range t.items {
		if it.SessionID == id {
			t.deleteItem(iid)
		}
	}
	for k := range t.b.open {
		if k.SessionID == id {
			t.open[k] = map[proto.EventKind]int64{}
		}
	}
	for k := range t.open {
		if k.SessionID == id {
			t.open[k] = map[proto.EventKind]int64{}
		}
	}
	delete(t.sessions, id)
	t.sessDel[id] = true
}

// Changes lists what Commit would write, for persisting first.
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

// Changes returns the pending changes in the order they were first made.
func (t *Tx) Changes() Changes {
	var c Changes
	for _, k := range t.runOrder {
		if r, ok := t.runs[k]; ok {
			c.Runs = append(c.Runs, *r)
		} else if t.runDel[k] {
			if _, existed := t.b.runs[k]; existed {
				c.DeletedRuns = append(c.DeletedRuns, k)
			}
		}
	}
	for _, id := range t.itmOrder {
		if it, ok := t.items[id]; ok {
			c.Items = append(c.Items, *it)
		} else if t.itemDel[id] {
			if _, existed := t.b.items[id]; existed {
				c.DeletedItems = append(c.DeletedItems, id)
			}
		}
	}
	slices.SortFunc(c.DeletedRuns, func(x, y RunKey) int {
		return cmp.Or(cmp.Compare(x.SessionID, y.SessionID), cmp.Compare(x.RunID, y.RunID))
	})
	return c
}

// Commit makes the changes visible on the board.
func (t *Tx) Commit() {
	b := t.b
	for k := range t.runDel {
		delete(b.runs, k)
	}
	for k, r := range t.runs {
		b.runs[k] = r
	}
	for id := range t.sessDel {
		delete(b.sessions, id)
	}
	for id, s := range t.sessions {
		b.sessions[id] = s
	}
	for id, k := range t.surfaces {
		if k == nil {
			delete(b.surfaces, id)
		} else {
			b.surfaces[id] = *k
		}
	}
	for id := range t.itemDel {
		delete(b.items, id)
	}
	for id, it := range t.items {
		b.items[id] = it
	}
	for k, m := range t.open {
		if len(m) == 0 {
			delete(b.open, k)
		} else {
			b.open[k] = m
		}
	}
	b.nextItem = t.nextItem
	b.seq = t.seq
	*t = Tx{b: b}
}
