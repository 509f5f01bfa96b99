package runstate

import (
	"cmp"
	"slices"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// ReasonNotification is the reason of an attention item that a pane's
// terminal asked for rather than an agent event: an OSC 9, OSC 777 or kitty
// OSC 99 notification, or the bell (seed 000, "Activity and attention").
// It is not an event kind: no event carries it.
const ReasonNotification proto.EventKind = "notification"

// Resolutions of notification and disconnect items.
const (
	ResolvedByRequest = "superseded by the agent's own request"
	ResolvedResumed   = "the session was resumed"
	ResolvedByRun     = "superseded by its run's own item"
)

// Notice is one request for the user's attention made through a pane's
// terminal. Rate limiting is the caller's (internal/native): every Notice
// reaches the board.
type Notice struct {
	SessionID string
	SurfaceID string
	Provider  string
	Message   string // the notification's text, or "bell"
	At        time.Time
	// RunID, when set, is the run the notice is about (a usage limit the
	// daemon found in a provider's transcript or screen, after or instead
	// of the run's own failure): the same stop told twice must stay one
	// item. A run with an open failed item has that item take the notice's
	// message; otherwise the notification item carries the run, and
	// resolves when the run's own item opens.
	RunID string
}

// NoticeEffect says what a Notice did.
type NoticeEffect string

const (
	NoticeOpened NoticeEffect = "opened" // a new item
	NoticeMerged NoticeEffect = "merged" // the surface's open notification item took the new text
	NoticeFolded NoticeEffect = "folded" // the session already asks for the user (approval or input item)
)

// noticeKey is where a session's open notification item is kept in
// Board.open: a run id no event can have (ids are never empty).
func noticeKey(sessionID string) RunKey { return RunKey{SessionID: sessionID} }

// openKey is where an open item is kept in Board.open: its run's key, or
// for a notification the session's one notice key, whichever run the
// notice is about.
func (it *Item) openKey() RunKey {
	if it.Reason == ReasonNotification {
		return noticeKey(it.SessionID)
	}
	return RunKey{it.SessionID, it.RunID}
}

// Notify records a notice. A session has at most one open notification
// item: a notice while it is open replaces its message (the newest request
// is the one to show) instead of opening another, so a burst is one item.
// A notice for a session that already has an open approval or input item
// is that request seen again through the terminal (Claude Code sends both),
// and opens nothing. The item resolves when the user acknowledges it, when
// an approval or input item opens for the session, or when a new run
// becomes the session's current one (the agent moved on).
func (b *Board) Notify(n Notice) (Item, NoticeEffect) {
	if n.RunID != "" && n.Message != "" {
		if id := b.open[RunKey{n.SessionID, n.RunID}][proto.KindFailed]; id != 0 {
			it := b.items[id]
			it.Message = n.Message
			b.dirtyItems[id] = struct{}{}
			return *it, NoticeMerged
		}
	}
	for k, m := range b.open {
		if k.SessionID != n.SessionID {
			continue
		}
		for reason, id := range m {
			if reason == proto.KindApprovalRequested || reason == proto.KindInputRequested {
				return *b.items[id], NoticeFolded
			}
		}
	}
	k := noticeKey(n.SessionID)
	msg := n.Message
	if msg == "" {
		msg = "the terminal asks for attention"
	}
	if id := b.open[k][ReasonNotification]; id != 0 {
		it := b.items[id]
		it.Message, it.SurfaceID, it.RunID = msg, n.SurfaceID, n.RunID
		b.dirtyItems[id] = struct{}{}
		return *it, NoticeMerged
	}
	it := &Item{
		ID: b.nextItem, SessionID: n.SessionID, SurfaceID: n.SurfaceID, Provider: n.Provider,
		Reason: ReasonNotification, Message: msg, OpenedAt: n.At, RunID: n.RunID,
	}
	b.nextItem++
	b.items[it.ID] = it
	b.dirtyItems[it.ID] = struct{}{}
	if b.open[k] == nil {
		b.open[k] = map[proto.EventKind]int64{}
	}
	b.open[k][ReasonNotification] = it.ID
	return *it, NoticeOpened
}

// resolveRunNotice resolves the session's open notification item if it is
// about run: the run's own item now tells the user.
func (b *Board) resolveRunNotice(sessionID, run string, at time.Time) []Item {
	id := b.open[noticeKey(sessionID)][ReasonNotification]
	if id == 0 || b.items[id].RunID != run {
		return nil
	}
	return []Item{b.resolve(id, at, ResolvedByRun)}
}

// resolveNotice resolves the session's open notification item, if any.
func (b *Board) resolveNotice(sessionID string, at time.Time, why string) []Item {
	id := b.open[noticeKey(sessionID)][ReasonNotification]
	if id == 0 {
		return nil
	}
	return []Item{b.resolve(id, at, why)}
}

// Resumed resolves the session's open disconnected items: the user brought
// the conversation back (`muster resume`), which is what the item asked for.
func (b *Board) Resumed(sessionID string, now time.Time) []Item {
	var out []Item
	for k, m := range b.open {
		if k.SessionID != sessionID {
			continue
		}
		if id := m[proto.KindDisconnected]; id != 0 {
			out = append(out, b.resolve(id, now, ResolvedResumed))
		}
	}
	slices.SortFunc(out, func(x, y Item) int { return cmp.Compare(x.ID, y.ID) })
	return out
}
