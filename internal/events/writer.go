package events

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/runstate"
	"github.com/musterhq/muster/internal/store"
)

// pending is one unit of work for the writer: an event to record, or an
// operation on the board (ack, close, removal, sweep, prune) that may
// synthesize events. Operations start a batch of their own, so they see
// the committed board.
type pending struct {
	ev   *runstate.Event
	op   func(b *runstate.Board, tx *runstate.Tx) (evs []runstate.Event, val any, err error)
	done chan outcome // buffered; nil when nobody waits
	out  outcome
}

type outcome struct {
	inserted bool
	code     string // an events.sock error code
	val      any
	err      error
}

// maxBatch bounds one group commit.
const maxBatch = 1024

// maxDirty is how many changed runs force a runs snapshot.
const maxDirty = 512

// errStopped answers work queued when the writer stops.
var errStopped = errors.New("the event engine stopped")

func (e *Engine) enqueue(p *pending) { e.queue <- p }

// submit queues p and waits for its outcome.
func (e *Engine) submit(ctx context.Context, p *pending) outcome {
	p.done = make(chan outcome, 1)
	select {
	case e.queue <- p:
	case <-ctx.Done():
		return outcome{err: ctx.Err()}
	}
	select {
	case o := <-p.done:
		return o
	case <-ctx.Done():
		return outcome{err: ctx.Err()}
	}
}

// writeLoop is the single writer: it takes whatever is queued (up to
// maxBatch events), commits it in one transaction, then answers everyone.
func (e *Engine) writeLoop(ctx context.Context) {
	batch := make([]*pending, 0, maxBatch)
	var carry *pending
	for {
		first := carry
		carry = nil
		if first == nil {
			select {
			case first = <-e.queue:
			case <-ctx.Done():
				e.drainStopped()
				return
			}
		}
		batch = append(batch[:0], first)
		if first.op == nil {
			batch, carry = e.gather(batch)
		}
		e.commit(ctx, batch)
	}
}

// maxGather bounds how long the writer waits for requests in flight.
const maxGather = 250 * time.Microsecond

// gather adds queued events to batch. While other requests are being
// decoded (inflight), it yields to them for up to maxGather so that they
// join this commit; with nothing in flight it returns at once, so a lone
// event is never delayed. An operation ends the batch and is returned as
// carry for the next one.
func (e *Engine) gather(batch []*pending) (_ []*pending, carry *pending) {
	var deadline time.Time
	for len(batch) < maxBatch {
		select {
		case p := <-e.queue:
			if p.op != nil {
				return batch, p
			}
			batch = append(batch, p)
			continue
		default:
		}
		if e.inflight.Load() == 0 {
			return batch, nil
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(maxGather)
		} else if now.After(deadline) {
			return batch, nil
		}
		runtime.Gosched()
	}
	return batch, nil
}

func (e *Engine) drainStopped() {
	for {
		select {
		case p := <-e.queue:
			p.reply(outcome{code: proto.ErrStorageFailure, err: errStopped})
		default:
			return
		}
	}
}

func (p *pending) reply(o outcome) {
	if p.done != nil {
		p.done <- o
	}
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
	added := make(map[uint64]struct{}, len(batch))
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
		added[fp] = struct{}{}
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
	flush := len(e.dirty)+len(ch.Runs) >= maxDirty
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
		if err := stx.MarkRunsSnapshot(ctx); err != nil {
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
	for fp := range added {
		e.seen[fp] = struct{}{}
	}
	if flush {
		clear(e.dirty)
	} else {
		for _, r := range ch.Runs {
			e.dirty[r.Key()] = r
		}
	}
	e.dirtyN.Store(int64(len(e.dirty)))
	e.mu.Lock()
	tx.Commit()
	e.broadcastLocked()
	e.mu.Unlock()
	return opened, nil
}
