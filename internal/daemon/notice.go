package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/attachterm"
	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/events"
	"github.com/musterhq/muster/internal/pane"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/rawio"
	"github.com/musterhq/muster/internal/termtext"
)

// noticeBoard holds the attached clients that asked to hear of other
// sessions' new attention items (proto.AttachNotice): a person attached
// to one agent otherwise never learns that another waits for them.
type noticeBoard struct {
	mu   sync.Mutex
	next uint64
	subs map[uint64]noticeSub
}

type noticeSub struct {
	sessionID string
	send      func(proto.Notice)
}

// subscribe adds an attached client of a session; the returned func
// removes it.
func (b *noticeBoard) subscribe(sessionID string, send func(proto.Notice)) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[uint64]noticeSub{}
	}
	b.next++
	id := b.next
	b.subs[id] = noticeSub{sessionID: sessionID, send: send}
	return func() {
		b.mu.Lock()
		delete(b.subs, id)
		b.mu.Unlock()
	}
}

// announce sends n to every client attached to a session other than the
// item's own: its own client shows the agent asking already.
func (b *noticeBoard) announce(sessionID string, n proto.Notice) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.subs {
		if s.sessionID != sessionID {
			s.send(n)
		}
	}
}

// announceAttention tells the attached clients of every attention item
// that opens while the daemon runs, until ctx ends. Items open when it
// starts are not new.
func (d *Daemon) announceAttention(ctx context.Context) {
	var seen map[int64]bool
	for {
		changed := d.events.Changed()
		items, err := d.events.Attention(proto.AttentionArgs{})
		if err != nil {
			d.logger.Warn("attention notices stopped", "err", err)
			return
		}
		open := make(map[int64]bool, len(items))
		for _, it := range items {
			open[it.ID] = true
			if seen != nil && !seen[it.ID] {
				name := it.SessionName
				if name == "" {
					name = it.SessionID
				}
				d.notices.announce(it.SessionID, proto.Notice{
					ItemID: it.ID, Session: termtext.Line(name), Reason: it.Reason,
					Title: events.ItemTitle(name, it.Reason), Body: termtext.Clip(it.Message, 200),
				})
			}
		}
		seen = open
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// noticeSender is what an attach subscribes: the notice goes to the
// client as a frame (the held terminal draws it itself), and when a line
// was drawn, a repaint takes it away after its time. stop ends the timer.
func noticeSender(c *pane.Client, style proto.AttachNotice) (send func(proto.Notice), stop func()) {
	seconds := style.Seconds
	if seconds <= 0 {
		seconds = config.DefaultNoticeSeconds
	}
	seconds = min(seconds, proto.MaxNoticeSeconds)
	var mu sync.Mutex
	var clear *time.Timer
	stopped := false
	send = func(n proto.Notice) {
		payload, err := json.Marshal(n)
		if err != nil {
			return
		}
		c.Notify(proto.FrameNotice, payload)
		if !style.Line {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		// A newer notice keeps the line up for its own time.
		if clear == nil {
			clear = time.AfterFunc(time.Duration(seconds)*time.Second, c.Repaint)
		} else {
			clear.Reset(time.Duration(seconds) * time.Second)
		}
	}
	stop = func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		if clear != nil {
			clear.Stop()
		}
	}
	return send, stop
}

// drawNotice draws a notice frame on the held terminal, only its bell
// while copy mode has the screen; it reports false when the terminal is
// the client's, which then draws it.
func (t *heldTerminal) drawNotice(data []byte) bool {
	if !t.on && !t.copying {
		return false
	}
	var n proto.Notice
	if json.Unmarshal(data, &n) != nil || t.notice == nil {
		return true
	}
	style := *t.notice
	if t.copying {
		style.Line = false
	}
	cols, rows := t.size()
	rawio.Write(t.rc, []byte(attachterm.Notice(style, n, cols, rows)))
	return true
}

// Sessions lists every session for the event engine's wait on any session
// (events.SessionLister), oldest first.
func (d *Daemon) Sessions() []events.SessionRef {
	d.mu.Lock()
	defer d.mu.Unlock()
	ss := make([]*session, 0, len(d.sessions))
	for _, s := range d.sessions {
		ss = append(ss, s)
	}
	slices.SortFunc(ss, func(a, b *session) int {
		return cmp.Or(a.rec.CreatedAt.Compare(b.rec.CreatedAt), strings.Compare(a.rec.Name, b.rec.Name))
	})
	refs := make([]events.SessionRef, len(ss))
	for i, s := range ss {
		refs[i] = events.SessionRef{ID: s.rec.ID, Name: s.rec.Name}
	}
	return refs
}
