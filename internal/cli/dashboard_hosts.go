package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/tui"
)

// hostPollInterval is how often the dashboard asks a host whose muster
// has no relay (an older version) for its sessions and drawer: one ssh
// command each, through the host's master.
const hostPollInterval = 2 * time.Second

// hostItemBase spaces the attention item ids of hosts apart from this
// machine's (and each other's) in the dashboard: item N of the i-th host
// shows as (i+1)*hostItemBase + N. Every daemon counts its own items
// from 1.
const hostItemBase = int64(1) << 40

// hostFeed keeps what every host said last: its state, its sessions
// (named HOST:NAME) and its drawer. Each host's daemon pushes them over
// a watch stream through `muster relay` (one ssh process per host for
// as long as the link holds, nothing spawned while it is idle); a link
// that drops is dialled again with host.DefaultBackoff, and the new
// stream's first push is a whole snapshot. A host that stops answering
// keeps its last sessions and items, which the dashboard dims.
type hostFeed struct {
	dirs    paths.Dirs
	cfg     config.Config
	changed chan struct{} // one pending wake-up for the merged stream
	cancel  context.CancelFunc

	mu       sync.Mutex
	status   []host.Status
	sessions map[string][]proto.SessionInfo
	items    map[string][]proto.AttentionItem
	// redialling is set while a host whose link dropped is dialled
	// again, before anything is known of the new link.
	redialling []bool
}

// quietRedial is how long a host whose link dropped stays shown as it
// was while it is dialled again: a link that comes straight back (its
// master killed, say) or fails at once (connection refused) shows no
// passing "connecting".
const quietRedial = time.Second

func startHostFeed(dirs paths.Dirs, cfg config.Config) *hostFeed {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hostFeed{dirs: dirs, cfg: cfg, changed: make(chan struct{}, 1), cancel: cancel,
		sessions: map[string][]proto.SessionInfo{}, items: map[string][]proto.AttentionItem{}}
	for _, c := range cfg.Hosts {
		h.status = append(h.status, host.Status{Name: c.Name, Dest: c.Dest, State: host.Connecting})
	}
	h.redialling = make([]bool, len(cfg.Hosts))
	for i, c := range cfg.Hosts {
		go h.follow(ctx, i, c)
	}
	return h
}

func (h *hostFeed) stop() { h.cancel() }

// follow keeps the i-th host's watch stream open until ctx ends. A host
// whose muster cannot relay, or whose daemon speaks no protocol of
// ours, is polled through its CLI instead, which says so as it always
// did.
func (h *hostFeed) follow(ctx context.Context, i int, c config.Host) {
	l := host.NewLink(h.dirs, h.cfg.SSH, c)
	for try := 0; ; try++ {
		// A link that went live starts the backoff over.
		err := h.watchHost(ctx, i, l, func() { try = 0 })
		if ctx.Err() != nil {
			return
		}
		_, skew := errors.AsType[*host.SkewError](err)
		if errors.Is(err, host.ErrNoRelay) || skew {
			h.pollHost(ctx, i, c)
			return
		}
		if errors.Is(err, linkDropped{}) {
			h.redial(i)
		} else {
			h.down(i, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(host.DefaultBackoff.Delay(try)):
		}
	}
}

// linkDropped is a watch stream that ended under the dashboard.
type linkDropped struct{}

func (linkDropped) Error() string { return "the connection dropped; connecting again" }

// watchHost opens the host's watch stream and applies its pushes until
// it ends; live is called once the first push arrived.
func (h *hostFeed) watchHost(ctx context.Context, i int, l host.Link, live func()) error {
	dctx, cancel := context.WithTimeout(ctx, hostListTimeout)
	defer cancel()
	c, err := l.Dial(dctx, Version)
	if err != nil {
		return err
	}
	defer c.Close()
	var u proto.WatchUpdate
	if err := c.Open(dctx, proto.OpWatch, nil, &u); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	live()
	var lastPush atomic.Int64
	lastPush.Store(time.Now().UnixNano())
	silent := make(chan struct{})
	hctx, endHeartbeat := context.WithCancel(ctx)
	defer endHeartbeat()
	go h.heartbeat(hctx, l, &lastPush, func() { close(silent); c.Close() })
	for first := true; ; first = false {
		h.apply(i, u, first)
		u = proto.WatchUpdate{}
		if err := c.Recv(&u); err != nil {
			h.remember(i)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			select {
			case <-silent:
				// Its master hangs on to the silent connection: the
				// next dial must start a new one.
				l.Drop()
				return linkSilentError{}
			default:
			}
			return linkDropped{}
		}
		lastPush.Store(time.Now().UnixNano())
	}
}

// feedHeartbeat is how long a host's watch stream may stay quiet before
// the dashboard makes a round trip through its link: a stream carries
// pushes only when something changes, and a link that went silent
// (sshd stopped, a cable pulled) would otherwise be noticed only by ssh's
// keepalive, after 45 s. While the host pushes, nothing is probed; while
// it is quiet, a probe forks one ssh every feedHeartbeat.
const feedHeartbeat = 10 * time.Second

// heartbeat probes the link whenever the stream was quiet for
// feedHeartbeat, and calls lost once a probe found it silent (a late
// probe on a link that carries output is not silence: linkWatch).
func (h *hostFeed) heartbeat(ctx context.Context, l host.Link, lastPush *atomic.Int64, lost func()) {
	if !l.Shared() {
		return // each probe would time a whole new connection
	}
	w := linkWatch{probe: l.Probe, received: masterReads(l.MasterPID(ctx))}
	t := time.NewTicker(feedHeartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(time.Unix(0, lastPush.Load())) < feedHeartbeat {
			continue
		}
		if w.silent(ctx) {
			lost()
			return
		}
	}
}

// apply takes a push of the i-th host's watch stream: the lists it
// carries replace the host's (nil: unchanged), and the host is connected.
func (h *hostFeed) apply(i int, u proto.WatchUpdate, first bool) {
	name := h.cfg.Hosts[i].Name
	h.mu.Lock()
	h.redialling[i] = false
	st := &h.status[i]
	st.State, st.Reason, st.Command = host.Connected, "", ""
	st.LastSeen = time.Now().UTC().Format(time.RFC3339)
	if u.Sessions != nil {
		st.Sessions = len(u.Sessions)
		h.sessions[name] = h.qualifySessions(name, u.Sessions)
	}
	if u.Attention != nil {
		h.items[name] = h.qualifyItems(i, u.Attention)
	}
	h.mu.Unlock()
	if first {
		// What host ls and a dashboard started while the host is away
		// show of it.
		host.MarkListed(h.dirs, name, u.Sessions)
	}
	h.wake()
}

// remember records the i-th host's sessions as it last listed them,
// when its stream ends.
func (h *hostFeed) remember(i int) {
	name := h.cfg.Hosts[i].Name
	h.mu.Lock()
	var list []proto.SessionInfo
	for _, s := range h.sessions[name] {
		s.Name = strings.TrimPrefix(s.Name, name+":")
		list = append(list, s)
	}
	h.mu.Unlock()
	host.MarkListed(h.dirs, name, list)
}

// down marks the i-th host as not connected, for err, keeping what it
// listed last; a host not heard from since the dashboard started shows
// what it listed the last time anything was.
func (h *hostFeed) down(i int, err error) {
	name := h.cfg.Hosts[i].Name
	state, reason, command := host.Connecting, err.Error(), ""
	if !errors.Is(err, linkDropped{}) {
		state, reason, command = hostState(err)
	}
	h.mu.Lock()
	if !errors.Is(err, linkDropped{}) {
		h.redialling[i] = false
	} else if !h.redialling[i] {
		// The new link settled first.
		h.mu.Unlock()
		return
	}
	st := &h.status[i]
	before := *st
	st.State, st.Reason, st.Command = state, reason, command
	if h.sessions[name] == nil {
		list, seen := host.Remembered(h.dirs, name)
		h.sessions[name] = h.qualifySessions(name, list)
		if !seen.IsZero() {
			st.LastSeen = seen.UTC().Format(time.RFC3339)
		}
	}
	changed := before != *st
	h.mu.Unlock()
	if changed {
		h.wake()
	}
}

// redial marks the i-th host as connecting again unless its next dial
// settles within quietRedial.
func (h *hostFeed) redial(i int) {
	h.mu.Lock()
	h.redialling[i] = true
	h.mu.Unlock()
	time.AfterFunc(quietRedial, func() {
		h.mu.Lock()
		still := h.redialling[i]
		h.mu.Unlock()
		if still {
			h.down(i, linkDropped{})
		}
	})
}

// hostState is a failed host's state, reason and command, as host ls
// says them.
func hostState(err error) (state, reason, command string) {
	if he, ok := errors.AsType[*host.Error](err); ok {
		return he.State, he.Reason, he.Command
	}
	return host.Unreachable, err.Error(), ""
}

func (h *hostFeed) qualifySessions(name string, list []proto.SessionInfo) []proto.SessionInfo {
	out := make([]proto.SessionInfo, 0, len(list))
	for _, s := range list {
		s.Name = qualified(name, s.Name)
		out = append(out, s)
	}
	return out
}

func (h *hostFeed) qualifyItems(i int, items []proto.AttentionItem) []proto.AttentionItem {
	return qualifyItems(i, h.cfg.Hosts[i].Name, items)
}

// qualifyItems are the items of the i-th host, name, as the dashboard and
// the web page show them: their sessions HOST:NAME, their ids apart from
// this machine's and other hosts'.
func qualifyItems(i int, name string, items []proto.AttentionItem) []proto.AttentionItem {
	out := make([]proto.AttentionItem, 0, len(items))
	for _, it := range items {
		it.Host = name
		it.ID += int64(i+1) * hostItemBase
		it.SessionName = qualified(name, it.SessionName)
		out = append(out, it)
	}
	return out
}

func (h *hostFeed) wake() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// pollHost asks the i-th host for its sessions and drawer through its
// CLI every hostPollInterval until ctx ends.
func (h *hostFeed) pollHost(ctx context.Context, i int, c config.Host) {
	one := config.Config{SSH: h.cfg.SSH, Hosts: []config.Host{c}}
	for {
		h.poll(ctx, i, one)
		select {
		case <-ctx.Done():
			return
		case <-time.After(hostPollInterval):
		}
	}
}

// poll asks the host of one (the i-th of the feed) for its sessions and
// its drawer.
func (h *hostFeed) poll(ctx context.Context, i int, one config.Config) {
	listing := host.ListAll(ctx, h.dirs, one, Version, hostListTimeout)[0]
	items, down := host.AttentionAll(ctx, h.dirs, one, Version, true, hostListTimeout)
	if ctx.Err() != nil {
		return
	}
	name := listing.Status.Name
	h.mu.Lock()
	before := []any{h.status[i], h.sessions[name], h.items[name]}
	h.status[i] = listing.Status
	if listing.Status.State == host.Connected || h.sessions[name] == nil {
		// A host down since before the dashboard started shows what it
		// listed last (host.ListAll's stale rows).
		h.sessions[name] = nil
		for _, s := range listing.Sessions {
			s.Name = qualified(name, s.Name)
			h.sessions[name] = append(h.sessions[name], s)
		}
	}
	if len(down) == 0 {
		var its []proto.AttentionItem
		for _, it := range items {
			it.ID += int64(i+1) * hostItemBase
			it.SessionName = qualified(it.Host, it.SessionName)
			its = append(its, it)
		}
		h.items[name] = its
	}
	changed := !reflect.DeepEqual(before, []any{h.status[i], h.sessions[name], h.items[name]})
	h.mu.Unlock()
	if changed {
		h.wake()
	}
}

// lists are every host's sessions and items, in the order of config.toml.
func (h *hostFeed) lists() ([]proto.SessionInfo, []proto.AttentionItem) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ss []proto.SessionInfo
	var its []proto.AttentionItem
	for _, c := range h.cfg.Hosts {
		ss = append(ss, h.sessions[c.Name]...)
		its = append(its, h.items[c.Name]...)
	}
	return ss, its
}

// Hosts is each host's state for the dashboard.
func (h *hostFeed) Hosts() []tui.HostState {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]tui.HostState, len(h.status))
	for i, s := range h.status {
		out[i] = tui.HostState{Name: s.Name, State: s.State, Reason: s.Reason}
		if t, err := time.Parse(time.RFC3339, s.LastSeen); err == nil {
			out[i].LastSeen = t
		}
	}
	return out
}

// mergedWatch is this machine's watch stream with every host's sessions
// and items added: each push carries both lists whole.
type mergedWatch struct {
	local     tui.WatchStream
	feed      *hostFeed
	pushes    chan localPush
	done      chan struct{}
	closeOnce sync.Once
	sessions  []proto.SessionInfo
	items     []proto.AttentionItem
}

type localPush struct {
	u   proto.WatchUpdate
	err error
}

func newMergedWatch(first proto.WatchUpdate, local tui.WatchStream, feed *hostFeed) (*mergedWatch, proto.WatchUpdate) {
	m := &mergedWatch{local: local, feed: feed, pushes: make(chan localPush), done: make(chan struct{}),
		sessions: first.Sessions, items: first.Attention}
	go func() {
		for {
			u, err := local.Next()
			select {
			case m.pushes <- localPush{u, err}:
			case <-m.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return m, m.merged()
}

func (m *mergedWatch) merged() proto.WatchUpdate {
	hs, hi := m.feed.lists()
	return proto.WatchUpdate{
		Sessions:  append(append([]proto.SessionInfo{}, m.sessions...), hs...),
		Attention: append(append([]proto.AttentionItem{}, m.items...), hi...),
	}
}

func (m *mergedWatch) Next() (proto.WatchUpdate, error) {
	select {
	case p := <-m.pushes:
		if p.err != nil {
			return proto.WatchUpdate{}, p.err
		}
		if p.u.Sessions != nil {
			m.sessions = p.u.Sessions
		}
		if p.u.Attention != nil {
			m.items = p.u.Attention
		}
	case <-m.feed.changed:
	case <-m.done:
		return proto.WatchUpdate{}, errors.New("watch closed")
	}
	return m.merged(), nil
}

func (m *mergedWatch) Close() error {
	m.closeOnce.Do(func() { close(m.done) })
	return m.local.Close()
}

// onHost splits HOST:NAME when the dashboard shows hosts and HOST is one.
func (b *dashboardBackend) onHost(name string) (host.Link, string, bool) {
	if b.feed == nil {
		return host.Link{}, "", false
	}
	h, n, ok := strings.Cut(name, ":")
	if !ok {
		return host.Link{}, "", false
	}
	c, ok := b.feed.cfg.Host(h)
	if !ok || c.Muster == "" {
		return host.Link{}, "", false
	}
	return host.NewLink(b.feed.dirs, b.feed.cfg.SSH, c), n, true
}

// runOn runs the host's muster with args and decodes its JSON answer
// into out (when not nil).
func runOn(ctx context.Context, l host.Link, out any, args ...string) error {
	b, err := l.Run(ctx, nil, append([]string{l.Host.Muster}, args...)...)
	if err != nil {
		if re, ok := errors.AsType[*host.RemoteExit](err); ok {
			return fmt.Errorf("host %s: %s", l.Host.Name, strings.TrimPrefix(termtext.Line(re.Error()), "muster: "))
		}
		return hostError(err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("host %s: bad answer to %s: %w", l.Host.Name, args[0], err)
		}
	}
	return nil
}

// ackOnHosts acknowledges the hosts' items among ids (as hostFeed
// numbers them), or every open item of every host, and returns the ids
// left for this machine.
func (b *dashboardBackend) ackOnHosts(ctx context.Context, ids []int64, all bool, res *proto.AckResult) ([]int64, error) {
	var local []int64
	byHost := map[int][]int64{}
	for _, id := range ids {
		if id < hostItemBase {
			local = append(local, id)
			continue
		}
		byHost[int(id/hostItemBase)-1] = append(byHost[int(id/hostItemBase)-1], id%hostItemBase)
	}
	for i, c := range b.feed.cfg.Hosts {
		if (!all && len(byHost[i]) == 0) || c.Muster == "" {
			continue
		}
		args := []string{"ack", "--json"}
		if all {
			args = append(args, "--all")
		} else {
			args = append(args, "--")
			for _, id := range byHost[i] {
				args = append(args, strconv.FormatInt(id, 10))
			}
		}
		var r proto.AckResult
		if err := runOn(ctx, host.NewLink(b.feed.dirs, b.feed.cfg.SSH, c), &r, args...); err != nil {
			if all {
				continue // an item on a host that is away stays open there
			}
			return nil, err
		}
		addHostAcks(res, r, i)
	}
	return local, nil
}

// previewOn streams the screen of the host's session n (full is
// HOST:NAME) from the host's daemon through its relay; a host whose
// muster cannot relay is read with capture (hostPreview).
func previewOn(ctx context.Context, l host.Link, n, full string) (proto.PreviewScreen, tui.PreviewStream, error) {
	dctx, cancel := context.WithTimeout(ctx, hostListTimeout)
	c, err := l.Dial(dctx, Version)
	cancel()
	_, skew := errors.AsType[*host.SkewError](err)
	if errors.Is(err, host.ErrNoRelay) || skew {
		p := &hostPreview{ctx: ctx, link: l, name: n, full: full}
		first, err := p.screen()
		if err != nil {
			return first, nil, err
		}
		p.last = first.Lines
		return first, p, nil
	}
	if err != nil {
		return proto.PreviewScreen{}, nil, hostError(err)
	}
	first, s, err := openStream[proto.PreviewScreen](ctx, c, proto.OpPreview, proto.PreviewArgs{Name: n})
	if err != nil {
		return first, nil, fmt.Errorf("host %s: %w", l.Host.Name, err)
	}
	first.Name = full
	return first, relayedPreview{s, full}, nil
}

// relayedPreview is a host's preview stream, its screens named HOST:NAME.
type relayedPreview struct {
	*stream[proto.PreviewScreen]
	full string
}

func (p relayedPreview) Next() (proto.PreviewScreen, error) {
	sc, err := p.stream.Next()
	sc.Name = p.full
	return sc, err
}

// hostPreview is a host's session's screen, read again every
// hostPreviewInterval with the host's `muster capture`, for a host whose
// muster has no relay.
type hostPreview struct {
	ctx  context.Context
	link host.Link
	name string // on the host
	full string // HOST:NAME
	last []string
}

const hostPreviewInterval = 500 * time.Millisecond

func (p *hostPreview) screen() (proto.PreviewScreen, error) {
	b, err := p.link.Run(p.ctx, nil, p.link.Host.Muster, "capture", "--ansi", "--", p.name)
	if err != nil {
		if re, ok := errors.AsType[*host.RemoteExit](err); ok {
			return proto.PreviewScreen{}, errors.New(strings.TrimPrefix(termtext.Line(re.Error()), "muster: "))
		}
		return proto.PreviewScreen{}, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return proto.PreviewScreen{Name: p.full, Lines: lines}, nil
}

// Next returns the screen once it changed.
func (p *hostPreview) Next() (proto.PreviewScreen, error) {
	for {
		select {
		case <-p.ctx.Done():
			return proto.PreviewScreen{}, p.ctx.Err()
		case <-time.After(hostPreviewInterval):
		}
		sc, err := p.screen()
		if err != nil {
			return sc, err
		}
		if !reflect.DeepEqual(sc.Lines, p.last) {
			p.last = sc.Lines
			return sc, nil
		}
	}
}

func (p *hostPreview) Close() error { return nil }

// hostAction answers the dashboard's calls on a host's session; ok is
// false when name is this machine's.
func (b *dashboardBackend) hostAction(ctx context.Context, name string, args ...string) (bool, error) {
	l, n, ok := b.onHost(name)
	if !ok {
		return false, nil
	}
	full := append(append([]string{}, args[0], "--", n), args[1:]...)
	return true, runOn(ctx, l, nil, full...)
}

// NewOn starts a session on a host (tui.HostCreator), as `muster new
// --host` does, detached: the dashboard attaches to it as HOST:NAME. The
// host's muster runs in its user's home, so a directory relative to it
// (or under ~, which no shell expands there) is given relative.
func (b *dashboardBackend) NewOn(ctx context.Context, hostName string, a proto.NewArgs) (proto.SessionInfo, error) {
	if b.feed == nil {
		return proto.SessionInfo{}, Userf("no host %q", hostName)
	}
	c, ok := b.feed.cfg.Host(hostName)
	if !ok {
		return proto.SessionInfo{}, Userf("no host %q", hostName)
	}
	if c.Muster == "" {
		return proto.SessionInfo{}, Userf("host %s: muster is not installed there yet; run `muster host add %s %s`", c.Name, c.Name, c.Dest)
	}
	argv := []string{c.Muster, "new", "--detach"}
	if a.Name != "" {
		argv = append(argv, "--name="+a.Name)
	}
	if dir := hostDir(a.Dir); dir != "" {
		argv = append(argv, "--dir="+dir)
	}
	if a.Cmd != "" {
		argv = append(argv, "--cmd="+a.Cmd)
		if a.ResumeCmd != "" {
			argv = append(argv, "--resume-cmd="+a.ResumeCmd)
		}
	}
	if a.Worktree != nil {
		// A value only as --worktree=BRANCH: the flag takes none after a
		// space (NoOptDefVal), so a bare one means the default branch.
		if a.Worktree.Branch == "" {
			argv = append(argv, "--worktree")
		} else {
			argv = append(argv, "--worktree="+a.Worktree.Branch)
		}
	}
	if a.Provider != "" {
		argv = append(argv, a.Provider)
	}
	argv = append(append(argv, "--"), a.Args...)
	l := host.NewLink(b.feed.dirs, b.feed.cfg.SSH, c)
	out, err := l.Run(ctx, nil, argv...)
	if err != nil {
		if re, ok := errors.AsType[*host.RemoteExit](err); ok {
			return proto.SessionInfo{}, fmt.Errorf("host %s: %s", c.Name, strings.TrimPrefix(termtext.Line(re.Error()), "muster: "))
		}
		return proto.SessionInfo{}, hostError(err)
	}
	name := strings.TrimSpace(string(out))
	if name == "" || strings.ContainsAny(name, "\n\r") {
		return proto.SessionInfo{}, fmt.Errorf("host %s: bad answer to new: %q", c.Name, out)
	}
	return proto.SessionInfo{Name: qualified(c.Name, name), Provider: a.Provider}, nil
}

// hostDir is a directory as typed for a host, relative to the host
// user's home where it was under ~; "" for the home itself.
func hostDir(dir string) string {
	switch {
	case dir == "~" || dir == "~/":
		return ""
	case strings.HasPrefix(dir, "~/"):
		return strings.TrimPrefix(dir, "~/")
	}
	return dir
}

// addHostAcks adds the i-th host's answer to an ack to res, its item ids
// numbered as this machine shows them (hostItemBase).
func addHostAcks(res *proto.AckResult, got proto.AckResult, i int) {
	base := int64(i+1) * hostItemBase
	for _, id := range got.Acknowledged {
		res.Acknowledged = append(res.Acknowledged, base+id)
	}
	for _, id := range got.Already {
		res.Already = append(res.Already, base+id)
	}
}
