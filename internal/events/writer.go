package events

import (
	"context"
	"encoding/json"
	"maps"
	"runtime"
	"slices"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/runstate"
	"github.com/musterhq/muster/internal/store"
)

// pending is one unit of work for the committer: an event to record, or
// an operation on the board (ack, close, removal, sweep, snapshot, prune)
// that may synthesize events. An operation is committed in a batch of its
// own, so it sees the committed board.
type pending struct {
	ev     *runstate.Event
	op     func(b *runstate.Board, tx *runstate.Tx) (evs []runstate.Event, val any, err error)
	done   chan outcome // buffered (1)
	waiter bool         // a goroutine waits on done and may be handed the lead
	fl     *flight      // lands once queued
	out    outcome
}

type outcome struct {
	inserted bool
	code     string // an events.sock error code
	val      any
	err      error
	lead     bool // not an outcome: the receiver now commits for everyone
	done     bool // set when the outcome is final
}

// maxBatch bounds one group commit.
const maxBatch = 1024

// maxDirty is how many changed runs, and maxFresh how many new event
// fingerprints, force a snapshot.
const (
	maxDirty = 512
	maxFresh = 8192
)

// Group commit without a writer goroutine: whoever submits work while no
// one is committing becomes the leader and commits everything queued, its
// own work included, in one transaction; the others wait for their outcome.
// Once its own work is answered the leader hands the lead to the next
// waiting submitter, so no caller commits for others for long, and a lone
// event is committed by its own goroutine with no hand-off at all.

// submit queues p and waits for its outcome, leading when no one else is.
func (e *Engine) submit(p *pending) outcome {
	p.done = make(chan outcome, 1)
	p.waiter = true
	e.cmu.Lock()
	e.cq = append(e.cq, p)
	if p.fl != nil {
		p.fl.land()
	}
	if e.leading {
		e.cmu.Unlock()
		o := <-p.done
		if !o.lead {
			return o
		}
	} else {
		e.leading = true
		e.cmu.Unlock()
	}
	e.lead(p)
	return <-p.done
}

// post queues p without waiting for it; it still commits p (and what is
// queued) itself when no one else is committing.
func (e *Engine) post(p *pending) {
	p.done = make(chan outcome, 1)
	e.cmu.Lock()
	e.cq = append(e.cq, p)
	if e.leading {
		e.cmu.Unlock()
		return
	}
	e.leading = true
	e.cmu.Unlock()
	e.lead(nil)
}

// lead commits batches until own (when not nil) has its outcome, then
// passes the lead to the first waiting submitter, or gives it up when the
// queue is empty.
func (e *Engine) lead(own *pending) {
	for {
		if batch := e.take(); len(batch) > 0 {
			e.commit(context.Background(), batch)
		}
		e.cmu.Lock()
		if len(e.cq) == 0 {
			e.cq = e.cq[:0:0]
			e.leading = false
			e.cmu.Unlock()
			return
		}
		if own == nil || own.out.answered() {
			for _, q := range e.cq {
				if q.waiter {
					e.cmu.Unlock()
					q.done <- outcome{lead: true}
					return
				}
			}
		}
		e.cmu.Unlock()
	}
}

func (o outcome) answered() bool { return o.done }

// take removes the next batch from the queue: an operation alone, or the
// events up to the next operation. While other requests are being read
// and decoded (inflight), it yields to them for up to maxGather so that
// they join this commit; with nothing in flight it returns at once, so a
// lone event is never delayed.
func (e *Engine) take() []*pending {
	var deadline time.Time
	for {
		e.cmu.Lock()
		n := 0
		for n < len(e.cq) && n < maxBatch && e.cq[n].op == nil {
			n++
		}
		if n == 0 && len(e.cq) > 0 { // an operation
			n = 1
		}
		full := n == maxBatch || n < len(e.cq) || (n > 0 && e.cq[0].op != nil)
		if !full && n > 0 && e.inflight.Load() > 0 {
			now := time.Now()
			if deadline.IsZero() {
				deadline = now.Add(maxGather)
			}
			if now.Before(deadline) {
				e.cmu.Unlock()
				runtime.Gosched()
				continue
			}
		}
		batch := slices.Clone(e.cq[:n])
		e.cq = e.cq[n:]
		e.cmu.Unlock()
		return batch
	}
}

// maxGather bounds how long a leader waits for requests in flight.
const maxGather = 250 * time.Microsecond

func (p *pending) reply(o outcome) {
	o.done = true
	p.out = o
	p.done <- o
}

// commit records a batch in one transaction and answers each pending after
// the commit. When the transaction fails, the members are retried one by
// one so that one bad event cannot fail its neighbours.
func (e *Engine) commit(ctx context.Context, batch []*pending) {
	opened, err := e.tryCommit(ctx, batch)
	if err != nil {
		if len(batch) > 1 {
			for _, p := range batch {
				e.commit(ctx, []*pending{p})
			}
			return
		}
		e.log.Error("commit events", "err", err)
		batch[0].reply(outcome{code: proto.ErrStorageFailure, err: err})
		return
	}
	for _, p := range batch {
		p.reply(p.out)
	}
	for _, it := range opened {
		select {
		case e.notes <- it:
		default:
			e.log.Debug("notification queue full; dropped one", "session_id", it.SessionID)
		}
	}
}

func (e *Engine) tryCommit(ctx context.Context, batch []*pending) ([]runstate.Item, error) {
	tx := e.board.Begin()
	stx, err := e.writer.Begin(ctx)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			stx.Rollback()
		}
	}()
	var opened []runstate.Item
	added := make(map[uint64]int64, len(batch)) // fingerprint → day received
	record := func(ev runstate.Event) (bool, error) {
		fp := store.Fingerprint(ev.ID)
		if _, dup := added[fp]; dup {
			return false, nil
		}
		if _, dup := e.seen[fp]; dup {
			return false, nil
		}
		err := stx.InsertEvent(ctx, store.EventRow{
			ID: ev.ID, SessionID: ev.SessionID, SurfaceID: ev.SurfaceID, RunID: ev.RunID,
			NativeSessionID: ev.NativeSessionID, Provider: ev.Provider, Kind: string(ev.Kind),
			HookName: ev.HookName, Message: ev.Message, OccurredAt: ev.OccurredAt, ReceivedAt: ev.ReceivedAt,
			Source: string(ev.Source), Effect: string(tx.Classify(ev)),
		})
		if err != nil {
			return false, err
		}
		added[fp] = ev.ReceivedAt.Unix() / 86400
		opened = append(opened, tx.Apply(ev).Opened...)
		return true, nil
	}
	for _, p := range batch {
		p.out = outcome{}
		if p.op != nil {
			evs, val, err := p.op(e.board, tx)
			p.out.val, p.out.err = val, err
			for _, ev := range evs {
				if _, err := record(ev); err != nil {
					return nil, err
				}
			}
			continue
		}
		if p.ev.Source == runstate.SourceHook && !e.surfaceLive(p.ev.SurfaceID) {
			// The surface closed after the event was authorized.
			p.out.code = proto.ErrUnauthorized
			continue
		}
		ins, err := record(*p.ev)
		if err != nil {
			return nil, err
		}
		p.out.inserted = ins
	}
	ch := tx.Changes()
	// Runs are written as a snapshot: with every operation (they are rare
	// and may delete runs), when many have changed, and every second
	// (maintain). In between, the events themselves are the record, and
	// Start replays those after the snapshot.
	flush := len(e.dirty)+len(ch.Runs) >= maxDirty || e.freshN+len(added) >= maxFresh
	for _, p := range batch {
		flush = flush || p.op != nil
	}
	for _, k := range ch.DeletedRuns {
		if err := stx.DeleteRun(ctx, k.SessionID, k.RunID); err != nil {
			return nil, err
		}
	}
	if flush {
		snap := make(map[runstate.RunKey]runstate.Run, len(e.dirty)+len(ch.Runs))
		for k, r := range e.dirty {
			snap[k] = r
		}
		for _, r := range ch.Runs {
			snap[r.Key()] = r
		}
		for _, k := range ch.DeletedRuns {
			delete(snap, k)
		}
		for _, r := range snap {
			data, err := json.Marshal(r)
			if err != nil {
				return nil, err
			}
			if err := stx.PutRun(ctx, store.RunRow{SessionID: r.SessionID, RunID: r.RunID, State: string(r.State), UpdatedAt: r.UpdatedAt, Data: data}); err != nil {
				return nil, err
			}
		}
		days := maps.Clone(e.fresh)
		for fp, day := range added {
			days[day] = append(slices.Clip(days[day]), fp)
		}
		for day, fps := range days {
			if err := stx.SaveFingerprints(ctx, day, fps); err != nil {
				return nil, err
			}
		}
		if err := stx.MarkSnapshot(ctx); err != nil {
			return nil, err
		}
	}
	for _, it := range ch.Items {
		if err := stx.PutItem(ctx, itemRow(it)); err != nil {
			return nil, err
		}
	}
	for _, id := range ch.DeletedItems {
		if err := stx.DeleteItem(ctx, id); err != nil {
			return nil, err
		}
	}
	if err := stx.Commit(); err != nil {
		return nil, err
	}
	ok = true
	e.batches.Add(1)
	e.committed.Add(int64(len(added)))
	for fp, day := range added {
		e.seen[fp] = struct{}{}
		if !flush {
			e.fresh[day] = append(e.fresh[day], fp)
			e.freshN++
		}
	}
	if flush {
		clear(e.dirty)
		clear(e.fresh)
		e.freshN = 0
	} else {
		for _, r := range ch.Runs {
			e.dirty[r.Key()] = r
		}
	}
	e.dirtyN.Store(int64(len(e.dirty) + e.freshN))
	e.mu.Lock()
	tx.Commit()
	e.broadcastLocked()
	e.mu.Unlock()
	return opened, nil
}
