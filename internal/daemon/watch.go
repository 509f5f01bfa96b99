package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// watchBackstop is how often a watch stream compares the state with what
// it last pushed even when nothing rang: a change that no code path
// announces (a resolved attention item ageing out of the last 24 hours)
// still reaches the dashboard. It reads the daemon's memory only and sends
// nothing when nothing changed.
const watchBackstop = 5 * time.Second

// stateChanged tells the watch streams that a session changed in a way
// the event engine does not see (new, launched, exited, renamed, its
// native id, a pane's title or activity). It costs an atomic load while
// nobody watches and never blocks, so the pane's reader may call it.
func (d *Daemon) stateChanged() { d.watchers.ring() }

// watch serves op "watch" (proto.WatchUpdate): the sessions and the
// attention drawer now, then again whenever they change, until the client
// hangs up or the daemon stops. Each push is computed when it is sent, so
// a client never gets a queue of stale states: a slow one gets the state
// as it is once it has read the last push, and one that stops reading is
// dropped by the write timeout.
func (d *Daemon) watch(ctx context.Context, conn *net.UnixConn, br *bufio.Reader) {
	rep := replier{w: deadlineWriter{conn}}
	rang, unsubscribe := d.watchers.subscribe()
	defer unsubscribe()
	ctx, cancel := untilHangUp(ctx, br)
	defer cancel()
	defer conn.CloseRead()

	var lastSessions, lastItems []byte
	first := true
	coalesce := time.NewTimer(time.Hour)
	coalesce.Stop()
	idleTimer := time.NewTimer(time.Hour)
	idleTimer.Stop()
	defer idleTimer.Stop()
	backstop := time.NewTicker(watchBackstop)
	defer backstop.Stop()
	for {
		// Taken before the state is read: a change while it is read
		// closes this channel and is pushed next round.
		changed := d.events.Changed()
		sessions, wake := d.watchSessions()
		items, err := d.events.Attention(proto.AttentionArgs{All: true})
		if err != nil {
			rep.fail(err)
			return
		}
		if items == nil {
			items = []proto.AttentionItem{}
		}
		sj, err := json.Marshal(sessions)
		if err != nil {
			rep.fail(err)
			return
		}
		ij, err := json.Marshal(items)
		if err != nil {
			rep.fail(err)
			return
		}
		var push struct {
			Sessions  json.RawMessage `json:"sessions,omitempty"`
			Attention json.RawMessage `json:"attention,omitempty"`
		}
		if first || string(sj) != string(lastSessions) {
			push.Sessions, lastSessions = sj, sj
		}
		if first || string(ij) != string(lastItems) {
			push.Attention, lastItems = ij, ij
		}
		if push.Sessions != nil || push.Attention != nil {
			if rep.ok(push) != nil {
				return
			}
		}
		first = false

		var idle <-chan time.Time
		if !wake.IsZero() {
			idleTimer.Reset(max(time.Until(wake), time.Millisecond))
			idle = idleTimer.C
		}
		select {
		case <-rang:
		case <-changed:
		case <-idle:
		case <-backstop.C:
		case <-ctx.Done():
			return
		}
		idleTimer.Stop()
		// Let a burst of changes gather into one push.
		coalesce.Reset(proto.MinWatchInterval)
		select {
		case <-coalesce.C:
		case <-ctx.Done():
			coalesce.Stop()
			return
		}
		select {
		case <-rang:
		default:
		}
	}
}

// watchSessions is op "ls"'s answer and the next time a session's run
// state turns idle by itself (zero: none is due).
func (d *Daemon) watchSessions() ([]proto.SessionInfo, time.Time) {
	list := d.list()
	now := time.Now()
	var wake time.Time
	for _, s := range list {
		at := d.events.SessionState(s.ID).IdleAt
		if at.After(now) && (wake.IsZero() || at.Before(wake)) {
			wake = at
		}
	}
	return list, wake
}
