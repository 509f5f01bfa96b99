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
	"time"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/tui"
)

// hostPollInterval is how often the dashboard asks each host for its
// sessions and drawer: one round trip over the host's master each.
const hostPollInterval = 2 * time.Second

// hostItemBase spaces the attention item ids of hosts apart from this
// machine's (and each other's) in the dashboard: item N of the i-th host
// shows as (i+1)*hostItemBase + N. Every daemon counts its own items
// from 1.
const hostItemBase = int64(1) << 40

// hostFeed keeps what every host said last: its state, its sessions
// (named HOST:NAME) and its drawer. A host that stops answering keeps
// its last sessions and items, which the dashboard dims.
type hostFeed struct {
	dirs    paths.Dirs
	cfg     config.Config
	changed chan struct{} // one pending wake-up for the merged stream
	cancel  context.CancelFunc

	mu       sync.Mutex
	status   []host.Status
	sessions map[string][]proto.SessionInfo
	items    map[string][]proto.AttentionItem
}

func startHostFeed(dirs paths.Dirs, cfg config.Config) *hostFeed {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hostFeed{dirs: dirs, cfg: cfg, changed: make(chan struct{}, 1), cancel: cancel,
		sessions: map[string][]proto.SessionInfo{}, items: map[string][]proto.AttentionItem{}}
	for _, c := range cfg.Hosts {
		h.status = append(h.status, host.Status{Name: c.Name, Dest: c.Dest, State: host.Connecting})
	}
	go func() {
		for {
			h.poll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-time.After(hostPollInterval):
			}
		}
	}()
	return h
}

func (h *hostFeed) stop() { h.cancel() }

// poll asks every host at once for its sessions and its drawer.
func (h *hostFeed) poll(ctx context.Context) {
	listings := host.ListAll(ctx, h.dirs, h.cfg, hostListTimeout)
	items, down := host.AttentionAll(ctx, h.dirs, h.cfg, true, hostListTimeout)
	if ctx.Err() != nil {
		return
	}
	h.mu.Lock()
	before := []any{h.status, h.sessions, h.items}
	status := make([]host.Status, len(listings))
	sessions := map[string][]proto.SessionInfo{}
	for i, l := range listings {
		status[i] = l.Status
		name := l.Status.Name
		if l.Status.State != host.Connected && h.sessions[name] != nil {
			sessions[name] = h.sessions[name]
			continue
		}
		// A host down since before the dashboard started shows what it
		// listed last (host.ListAll's stale rows).
		for _, s := range l.Sessions {
			s.Name = qualified(name, s.Name)
			sessions[name] = append(sessions[name], s)
		}
	}
	answered := map[string][]proto.AttentionItem{}
	for _, it := range items {
		i := h.index(it.Host)
		it.ID += int64(i+1) * hostItemBase
		it.SessionName = qualified(it.Host, it.SessionName)
		answered[it.Host] = append(answered[it.Host], it)
	}
	byHost := map[string][]proto.AttentionItem{}
	for _, c := range h.cfg.Hosts {
		byHost[c.Name] = answered[c.Name]
	}
	for _, d := range down {
		byHost[d.Name] = h.items[d.Name]
	}
	h.status, h.sessions, h.items = status, sessions, byHost
	changed := !reflect.DeepEqual(before, []any{h.status, h.sessions, h.items})
	h.mu.Unlock()
	if changed {
		select {
		case h.changed <- struct{}{}:
		default:
		}
	}
}

func (h *hostFeed) index(name string) int {
	for i, c := range h.cfg.Hosts {
		if c.Name == name {
			return i
		}
	}
	return len(h.cfg.Hosts)
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
		base := int64(i+1) * hostItemBase
		for _, id := range r.Acknowledged {
			res.Acknowledged = append(res.Acknowledged, base+id)
		}
		for _, id := range r.Already {
			res.Already = append(res.Already, base+id)
		}
	}
	return local, nil
}

// hostPreview is a host's session's screen, read again every
// hostPreviewInterval with the host's `muster capture`: the host's daemon
// pushes previews over its own socket only.
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
