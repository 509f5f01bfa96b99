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

// The event write path: one writer goroutine owns the board and the store's
// event tables. Requests queue their work (a bounded channel; a full queue
// makes submitters wait), and the writer commits whatever is queued in one
// transaction, answers each request after the commit, and only then applies
// the recorded events to the board, so that readers never see an event that
// is not durable and a failed commit leaves the board as it was.

// pending is one unit of work for the writer: an event to record, or an
// operation on the board (ack, close, removal, sweep, snapshot, prune) that
// may synthesize events. An operation is committed in a transaction of its
// own, after the events queued before it are applied, so it sees them.
type pending struct {
	ev   *runstate.Event
	op   func(b *runstate.Board) (evs []runstate.Event, val any, err error)
	done chan outcome // buffered (1); nil when nobody waits
}

type outcome struct {
	inserted bool
	code     string // an events.sock error code
	val      any
	err      error
}

// Limits of the write path.
const (
	queueSize = 1024 // work waiting for the writer
	maxBatch  = 1024 // events in one transaction
	maxDirty  = 512  // changed runs and items that force a snapshot
	// maxUnflushed stored events whose ids only memory holds force a
	// snapshot, which writes them to the store (store.EventWriter).
	maxUnflushed = 4096
	// defaultMaxHold bounds how long the writer waits for the events of
	// concurrent clients: a fraction of the commit each one that joins
	// saves.
	defaultMaxHold = 100 * time.Microsecond
)

// ErrClosed is returned for work submitted after Close.
var ErrClosed = errors.New("the event engine is closed")

// submit queues p and waits for its outcome.
func (e *Engine) submit(p *pending) outcome {
	p.done = make(chan outcome, 1)
	if !e.enqueue(p) {
		return outcome{err: ErrClosed}
	}
	return <-p.done
}

// post queues p without waiting for it.
func (e *Engine) post(p *pending) { e.enqueue(p) }

func (e *Engine) enqueue(p *pending) bool {
	e.qmu.RLock()
	defer e.qmu.RUnlock()
	if e.closed || e.queue == nil {
		return false
	}
	e.queue <- p
	return true
}

func (p *pending) reply(o outcome) {
	if p.done != nil {
		p.done <- o
	}
}

// startWriter starts the writer goroutine; Close stops it.
func (e *Engine) startWriter() {
	e.qmu.Lock()
	e.queue = make(chan *pending, queueSize)
	e.writerDone = make(chan struct{})
	e.qmu.Unlock()
	go e.write()
}

// Close stops the writer once everything queued is committed, and writes
// the last runs snapshot. Work submitted after Close fails with ErrClosed.
// Serve should have returned first.
func (e *Engine) Close() error {
	e.qmu.Lock()
	if e.closed || e.queue == nil {
		e.closed = true
		e.qmu.Unlock()
		return nil
	}
	e.closed = true
	close(e.queue)
	e.qmu.Unlock()
	<-e.writerDone
	return e.writer.Close()
}

func (e *Engine) write() {
	defer close(e.writerDone)
	batch := make([]*pending, 0, 64)
	hold := time.NewTimer(time.Hour)
	hold.Stop()
	lastN := 0
	for p := range e.queue {
		batch = append(batch[:0], p)
		yielded := false
	fill:
		for len(batch) < maxBatch {
			select {
			case q, ok := <-e.queue:
				if !ok {
					break fill
				}
				batch = append(batch, q)
			default:
				// Concurrent requests reach the writer while the others
				// are still being read and decoded, so without a yield
				// nearly every commit holds one event, and the commit
				// (its locks and WAL writes) costs more than the rest of
				// an event. One yield lets the request goroutines that
				// are ready queue theirs first; when none is ready it
				// returns at once, so a lone request does not wait.
				if len(batch) == 1 && batch[0].op == nil && !yielded {
					yielded = true
					runtime.Gosched()
					continue
				}
				break fill
			}
		}
		// Requests from other processes need the processor too, and a
		// yield does not give it to them: after a batch of several
		// events (concurrent clients, acknowledged together, sending
		// their next), wait a little for as many before committing. A
		// client sending alone never waits, since its batches hold one.
		if lastN > 1 && len(batch) < lastN && batch[len(batch)-1].op == nil {
			e.held.Add(1)
			hold.Reset(e.cfg.maxHold)
		wait:
			for len(batch) < lastN {
				select {
				case q, ok := <-e.queue:
					if !ok {
						break wait
					}
					batch = append(batch, q)
					if q.op != nil {
						break wait
					}
				case <-hold.C:
					break wait
				}
			}
			hold.Stop()
		}
		// Operations (snapshots, acks) say nothing of how many clients
		// send events: a batch of operations alone leaves lastN be.
		if n := events(batch); n > 0 {
			lastN = n
		}
		for i := 0; i < len(batch); {
			if batch[i].op != nil {
				e.runOp(batch[i])
				i++
				continue
			}
			j := i + 1
			for j < len(batch) && batch[j].op == nil {
				j++
			}
			e.commitEvents(batch[i:j])
			i = j
		}
		clear(batch)
	}
	if e.board.Dirty() > 0 {
		if _, _, err := e.persist(context.Background(), nil, true); err != nil {
			e.log.Warn("write the last runs snapshot", "err", err)
		}
	}
}

// events counts the events in batch.
func events(batch []*pending) int {
	n := 0
	for _, q := range batch {
		if q.op == nil {
			n++
		}
	}
	return n
}

// commitEvents records events from requests in one transaction. When it
// fails, the events are retried one by one so that one bad event cannot
// fail its neighbours.
func (e *Engine) commitEvents(ps []*pending) {
	evs := make([]*runstate.Event, 0, len(ps))
	for _, p := range ps {
		if p.ev.Source == runstate.SourceHook && !e.surfaceLive(p.ev.SurfaceID) {
			continue // the surface closed after the event was authorized
		}
		evs = append(evs, p.ev)
	}
	snap := e.board.Dirty() >= maxDirty || e.writer.Unflushed() >= maxUnflushed
	ins, _, err := e.persist(context.Background(), evs, snap)
	if err != nil {
		if len(ps) > 1 {
			for _, p := range ps {
				e.commitEvents([]*pending{p})
			}
			return
		}
		e.log.Error("commit events", "err", err)
		ps[0].reply(outcome{code: proto.ErrStorageFailure, err: err})
		return
	}
	i := 0
	for _, p := range ps {
		if i < len(evs) && evs[i] == p.ev {
			p.reply(outcome{inserted: ins[i]})
			i++
		} else {
			p.reply(outcome{code: proto.ErrUnauthorized})
		}
	}
}

// runOp runs an operation on the board and persists what it changed, with
// the events it synthesized, in one transaction that also writes the runs
// snapshot. An operation that fails must leave the board unchanged.
func (e *Engine) runOp(p *pending) {
	e.mu.Lock()
	evs, val, err := p.op(e.board)
	e.broadcastLocked()
	e.mu.Unlock()
	if err != nil {
		p.reply(outcome{err: err})
		return
	}
	ptrs := make([]*runstate.Event, len(evs))
	for i := range evs {
		ptrs[i] = &evs[i]
	}
	if _, _, err := e.persist(context.Background(), ptrs, true); err != nil {
		// What the operation changed stays on the board and is written by
		// the next snapshot.
		e.log.Error("commit an operation", "err", err)
		p.reply(outcome{val: val, code: proto.ErrStorageFailure, err: err})
		return
	}
	p.reply(outcome{val: val})
}

// persist writes, in one transaction, the board's changes as the runs
// snapshot (when snap) and then the events, each with the effect it will
// have; it reports which events were new. Once committed, the new events
// are applied to the board and their attention items handed to the
// notifier. On error nothing is applied.
func (e *Engine) persist(ctx context.Context, evs []*runstate.Event, snap bool) (inserted []bool, opened []runstate.Item, err error) {
	tx, err := e.writer.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			tx.Rollback()
		}
	}()
	if snap {
		// The snapshot goes first: it reflects every event applied so far,
		// and MarkSnapshot records the newest seq before this batch's.
		if err := e.writeSnapshot(ctx, tx, e.board.Changes()); err != nil {
			return nil, nil, err
		}
	}
	inserted = make([]bool, len(evs))
	pv := e.board.Preview()
	n := 0
	for i, ev := range evs {
		ins, err := tx.InsertEvent(ctx, store.EventRow{
			ID: ev.ID, SessionID: ev.SessionID, SurfaceID: ev.SurfaceID, RunID: ev.RunID,
			NativeSessionID: ev.NativeSessionID, Provider: ev.Provider, Kind: string(ev.Kind),
			HookName: ev.HookName, Message: ev.Message, OccurredAt: ev.OccurredAt, ReceivedAt: ev.ReceivedAt,
			Source: string(ev.Source), Effect: string(pv.Effect(*ev)),
		})
		if err != nil {
			return nil, nil, err
		}
		if ins {
			pv.Add(*ev)
			inserted[i] = true
			n++
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, err
	}
	ok = true
	e.batches.Add(1)
	e.committed.Add(int64(n))
	if snap {
		e.board.ClearChanges()
	}
	if n > 0 {
		e.mu.Lock()
		for i, ev := range evs {
			if inserted[i] {
				opened = append(opened, e.board.Apply(*ev).Opened...)
			}
		}
		e.broadcastLocked()
		e.mu.Unlock()
	}
	e.dirtyN.Store(int64(e.board.Dirty()))
	for _, it := range opened {
		select {
		case e.notes <- it:
		default:
			e.log.Debug("notification queue full; dropped one", "session_id", it.SessionID)
		}
	}
	return inserted, opened, nil
}

// writeSnapshot writes changed runs and items and marks the snapshot.
func (e *Engine) writeSnapshot(ctx context.Context, tx *store.EventTx, c runstate.Changes) error {
	for _, k := range c.DeletedRuns {
		if err := tx.DeleteRun(ctx, k.SessionID, k.RunID); err != nil {
			return err
		}
	}
	for _, r := range c.Runs {
		data, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if err := tx.PutRun(ctx, store.RunRow{SessionID: r.SessionID, RunID: r.RunID, State: string(r.State), UpdatedAt: r.UpdatedAt, Data: data}); err != nil {
			return err
		}
	}
	for _, id := range c.DeletedItems {
		if err := tx.DeleteItem(ctx, id); err != nil {
			return err
		}
	}
	for _, it := range c.Items {
		if err := tx.PutItem(ctx, itemRow(it)); err != nil {
			return err
		}
	}
	return tx.MarkSnapshot(ctx)
}
