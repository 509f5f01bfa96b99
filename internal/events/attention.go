package events

import (
	"context"
	"time"

	"github.com/musterhq/muster/internal/runstate"
)

// Notify records a request for the user's attention that a pane's terminal
// made: an OSC 9, 777 or 99 notification or a bell (runstate.Board.Notify
// says when it opens an item). It runs on the pane's output path, so it
// never waits: when the writer's queue is full the request is dropped and
// Notify reports false. Rate limiting per pane is the caller's
// (internal/native). A new item runs the notification command.
func (e *Engine) Notify(surfaceID, message string, at time.Time) bool {
	return e.NotifyRun(surfaceID, "", message, at)
}

// NotifyRun is Notify for a notice about one run of the surface (a usage
// limit found after, or instead of, the run's own failure): the run's open
// failed item takes the message rather than a second item opening
// (runstate.Notice.RunID).
func (e *Engine) NotifyRun(surfaceID, runID, message string, at time.Time) bool {
	surf := e.surface(surfaceID)
	if surf == nil {
		return false
	}
	n := runstate.Notice{SessionID: surf.SessionID, SurfaceID: surfaceID, Provider: surf.Provider, Message: message, At: at, RunID: runID}
	return e.tryPost(&pending{op: func(b *runstate.Board) ([]runstate.Event, any, error) {
		if it, eff := b.Notify(n); eff == runstate.NoticeOpened {
			e.queueNote(it)
		}
		return nil, nil, nil
	}})
}

// Resumed tells the engine that the user resumed the session: its open
// `disconnected` items resolve, since the conversation they reported lost
// is back.
func (e *Engine) Resumed(ctx context.Context, sessionID string) error {
	o := e.submit(&pending{op: func(b *runstate.Board) ([]runstate.Event, any, error) {
		b.Resumed(sessionID, e.now())
		return nil, nil, nil
	}})
	if o.err != nil {
		return o.err
	}
	return ctx.Err()
}

// tryPost queues p without waiting, unless the queue is full.
func (e *Engine) tryPost(p *pending) bool {
	e.qmu.RLock()
	defer e.qmu.RUnlock()
	if e.closed || e.queue == nil {
		return false
	}
	select {
	case e.queue <- p:
		return true
	default:
		return false
	}
}

// queueNote hands a new item to the notification command.
func (e *Engine) queueNote(it runstate.Item) {
	select {
	case e.notes <- it:
	default:
		e.log.Debug("notification queue full; dropped one", "session_id", it.SessionID)
	}
}
