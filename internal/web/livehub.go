package web

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// liveHub holds what the daemon pushes for the Live page (op "watch" for
// the sessions and attention items, op "preview" for each running pane's
// screen) while at least one page listens, and wakes the listeners when
// it changes, and what the hosts push (Options.Remote, remote.go). One
// hub serves every open page: the daemon sees one watch and one preview
// per pane however many tabs are open, each host one link, and nothing
// is asked of either while no page is open.
type liveHub struct {
	watch   func(ctx context.Context, push func(proto.WatchUpdate)) error
	preview func(ctx context.Context, name string, push func(proto.PreviewScreen)) error
	// retry spaces the attempts to reach a daemon that is not running.
	retry time.Duration
	// external, when set, is listed again while pages listen
	// (pollExternal); kick wakes that loop after each push of the panes.
	external *externalList
	kick     chan struct{}
	// remote, when set, is followed too (remote.go).
	remote Remote

	mu   sync.Mutex
	subs map[chan struct{}]struct{}
	stop context.CancelFunc
	// known is set once the first watch answered or failed: until then
	// a page has nothing true to show.
	known     bool
	running   bool
	sessions  []proto.SessionInfo
	attention []proto.AttentionItem
	screens   map[string]string
	previews  map[string]context.CancelFunc
	// hosts is what remote pushed last (nil before its first push), and
	// hostPreviews the host sessions whose screens are followed.
	hosts        []HostState
	hostPreviews map[string]context.CancelFunc
}

// subscribe registers a listener, starting the hub for the first one. The
// channel receives a value (coalesced) after each change; cancel
// unregisters it, stopping the hub after the last one.
func (h *liveHub) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[chan struct{}]struct{}{}
	}
	h.subs[ch] = struct{}{}
	if h.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		h.stop = cancel
		h.screens = map[string]string{}
		h.previews = map[string]context.CancelFunc{}
		h.hostPreviews = map[string]context.CancelFunc{}
		go h.run(ctx)
		if h.remote != nil {
			go h.remote.Follow(ctx, func(hs []HostState) { h.applyHosts(ctx, hs) })
		}
		if h.external != nil {
			h.kick = make(chan struct{}, 1)
			go h.pollExternal(ctx, h.kick)
		}
	}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, ch)
		if len(h.subs) == 0 && h.stop != nil {
			h.stop()
			h.stop = nil
			h.known, h.running = false, false
			h.sessions, h.attention = nil, nil
			h.hosts = nil
		}
	}
}

// hubSnapshot is the hub's state: whether it is known yet, whether a
// daemon answers, the lists and screens it pushed, and the hosts.
type hubSnapshot struct {
	known, running bool
	sessions       []proto.SessionInfo
	attention      []proto.AttentionItem
	screens        map[string]string
	hosts          []HostState
}

func (h *liveHub) snapshot() hubSnapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	screens := make(map[string]string, len(h.screens))
	for k, v := range h.screens {
		screens[k] = v
	}
	return hubSnapshot{known: h.known, running: h.running, sessions: h.sessions, attention: h.attention, screens: screens, hosts: h.hosts}
}

// notifyLocked wakes every listener. h.mu is held.
func (h *liveHub) notifyLocked() {
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// run keeps a watch open until ctx ends, reconnecting after the daemon
// stops or restarts (a restarted daemon pushes its whole state first).
func (h *liveHub) run(ctx context.Context) {
	for ctx.Err() == nil {
		// An error means no daemon answers (the page says so); the next
		// attempt may find one.
		h.watch(ctx, func(u proto.WatchUpdate) { h.apply(ctx, u) })
		h.mu.Lock()
		if ctx.Err() != nil {
			// Stopped: the state is the next run's, if any.
			h.mu.Unlock()
			return
		}
		h.known, h.running = true, false
		h.sessions, h.attention = nil, nil
		h.stopPreviewsLocked(nil)
		h.notifyLocked()
		h.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(h.retry):
		}
	}
}

// apply takes one push of the watch: the lists it carries replace the
// hub's, and the running panes get a preview each.
func (h *liveHub) apply(ctx context.Context, u proto.WatchUpdate) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	h.known, h.running = true, true
	if u.Sessions != nil {
		h.sessions = u.Sessions
		live := map[string]bool{}
		for _, si := range u.Sessions {
			if si.State == "running" {
				live[si.Name] = true
			}
		}
		h.stopPreviewsLocked(live)
		if h.preview != nil {
			for name := range live {
				if _, ok := h.previews[name]; !ok {
					pctx, cancel := context.WithCancel(ctx)
					h.previews[name] = cancel
					go h.follow(pctx, name, h.preview, h.retry)
				}
			}
		}
	}
	if u.Attention != nil {
		h.attention = u.Attention
	}
	if u.Sessions != nil && h.kick != nil {
		select {
		case h.kick <- struct{}{}:
		default:
		}
	}
	h.notifyLocked()
}

// pollExternal lists the background agents while the hub runs and a
// daemon answers: at the first push of the panes (an agent a pane runs
// is the pane's, so the listing needs them), then whenever the last
// listing is older than its interval. The pages are woken after each new
// listing.
func (h *liveHub) pollExternal(ctx context.Context, kick <-chan struct{}) {
	timer := time.NewTimer(h.external.interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		case <-timer.C:
		}
		h.mu.Lock()
		running, sessions := h.running, h.sessions
		h.mu.Unlock()
		if running {
			before := h.external.generation()
			h.external.get(ctx, sessions)
			if h.external.generation() != before {
				h.mu.Lock()
				if ctx.Err() == nil {
					h.notifyLocked()
				}
				h.mu.Unlock()
			}
		}
		timer.Reset(h.external.interval)
	}
}

// stopPreviewsLocked ends the previews of the panes not in keep (all of
// them for nil) and forgets their screens. h.mu is held.
func (h *liveHub) stopPreviewsLocked(keep map[string]bool) {
	for name, cancel := range h.previews {
		if !keep[name] {
			cancel()
			delete(h.previews, name)
			delete(h.screens, name)
		}
	}
}

// follow keeps one pane's screen current until ctx ends or the pane
// exits; a broken stream is opened again after the retry interval,
// doubled after each attempt that showed nothing, up to most.
func (h *liveHub) follow(ctx context.Context, name string, preview func(ctx context.Context, name string, push func(proto.PreviewScreen)) error, most time.Duration) {
	delay := h.retry
	for ctx.Err() == nil {
		exited, pushed := false, false
		preview(ctx, name, func(ps proto.PreviewScreen) {
			h.mu.Lock()
			defer h.mu.Unlock()
			if ctx.Err() != nil {
				return
			}
			h.screens[name] = previewText(strings.Join(ps.Lines, "\n"))
			exited = exited || ps.Exited
			pushed = true
			h.notifyLocked()
		})
		if exited {
			return
		}
		if pushed {
			delay = h.retry
		} else {
			delay = min(2*delay, max(most, h.retry))
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
	}
}

// hostPreviewRetry is the longest wait before a host's screen stream is
// opened again: each attempt on a host that is away starts ssh.
const hostPreviewRetry = 10 * time.Second

// applyHosts takes a push of the hosts: their state replaces the hub's,
// and the screens of their sessions with an open attention item are
// followed (maxHostPreviews).
func (h *liveHub) applyHosts(ctx context.Context, hosts []HostState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	h.hosts = hosts
	want := map[string]bool{}
	for _, hs := range hosts {
		if !hs.Connected {
			continue
		}
		running := map[string]bool{}
		for _, si := range hs.Sessions {
			running[si.Name] = si.State == "running"
		}
		for _, it := range hs.Attention {
			if it.Open && running[it.SessionName] && len(want) < maxHostPreviews {
				want[it.SessionName] = true
			}
		}
	}
	for name, cancel := range h.hostPreviews {
		if !want[name] {
			cancel()
			delete(h.hostPreviews, name)
			delete(h.screens, name)
		}
	}
	for name := range want {
		if _, ok := h.hostPreviews[name]; !ok {
			pctx, cancel := context.WithCancel(ctx)
			h.hostPreviews[name] = cancel
			go h.follow(pctx, name, h.remote.Preview, hostPreviewRetry)
		}
	}
	h.notifyLocked()
}
