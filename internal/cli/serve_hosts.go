package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/web"
)

// serveHosts is `muster serve`'s way to the hosts of config.toml as it
// read them at start: the Live page's web.Remote, and the HOST:NAME half
// of the server's Attach, Capture, Send and Ack.
//
//   - The page's lists are the dashboard's hostFeed: one watch stream per
//     host over a relay of its own (`muster relay` through the host's
//     master), held while a page listens and shared by every page, so a
//     page view starts no ssh process; a host whose muster cannot relay
//     is polled through its CLI every hostPollInterval, as the dashboard
//     polls it.
//   - A terminal is the host daemon's attach stream over a relay of its
//     own (relay mode: no terminal crosses ssh), relayed to the page as a
//     local pane's is.
//   - A click (answer, acknowledge) and the screen checked before an
//     answer go through the local daemon's relay to the host (host.Call),
//     or over ssh when that relay cannot carry them.
//
// Items of the i-th host are numbered (i+1)*hostItemBase + N, as in the
// dashboard, so that ids of two daemons never meet on the page.
type serveHosts struct {
	dirs paths.Dirs
	cfg  config.Config
}

var _ web.Remote = serveHosts{}

// Follow is web.Remote's: every host's state, pushed after each change.
func (r serveHosts) Follow(ctx context.Context, push func([]web.HostState)) {
	feed := startHostFeed(r.dirs, r.cfg)
	defer feed.stop()
	for {
		push(feed.states())
		select {
		case <-ctx.Done():
			return
		case <-feed.changed:
		}
	}
}

// states is each host as the Live page shows it, in config.toml's order.
func (h *hostFeed) states() []web.HostState {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]web.HostState, len(h.status))
	for i, s := range h.status {
		out[i] = web.HostState{Name: s.Name, State: s.State, Connected: s.State == host.Connected, Reason: s.Reason, Command: s.Command,
			Sessions: h.sessions[s.Name], Attention: h.items[s.Name]}
		if t, err := time.Parse(time.RFC3339, s.LastSeen); err == nil {
			out[i].LastSeen = t
		}
	}
	return out
}

// link splits HOST:NAME into the link to HOST and NAME there.
func (r serveHosts) link(name string) (host.Link, string, error) {
	hn, n, _ := strings.Cut(name, ":")
	h, ok := r.cfg.Host(hn)
	if !ok {
		return host.Link{}, "", fmt.Errorf("no host %q in config.toml (add it with muster host add %s DEST, then restart muster serve)", hn, hn)
	}
	l, err := r.linkTo(h)
	return l, n, err
}

// linkTo is the link to h, once muster is installed there.
func (r serveHosts) linkTo(h config.Host) (host.Link, error) {
	if h.Muster == "" {
		return host.Link{}, fmt.Errorf("host %s: muster is not installed there yet; run muster host add %s %s", h.Name, h.Name, h.Dest)
	}
	return host.NewLink(r.dirs, r.cfg.SSH, h), nil
}

// problem says in one line why a host could not be used.
func (r serveHosts) problem(l host.Link, err error) error {
	if errors.Is(err, host.ErrNoRelay) {
		return fmt.Errorf("host %s: its muster has no relay command; run muster host upgrade %s", l.Host.Name, l.Host.Name)
	}
	if se, ok := errors.AsType[*host.SkewError](err); ok {
		return fmt.Errorf("%s; %s", se.Error(), se.Advice())
	}
	if re, ok := errors.AsType[*host.RemoteExit](err); ok {
		return fmt.Errorf("host %s: %s", l.Host.Name, strings.TrimPrefix(termtext.Line(re.Error()), "muster: "))
	}
	if _, ok := errors.AsType[*host.Error](err); ok {
		return err
	}
	return fmt.Errorf("host %s: %w", l.Host.Name, err)
}

// dial opens a relay to the host's daemon, bounded as a listing is.
func (r serveHosts) dial(ctx context.Context, l host.Link) (*paneStream, error) {
	dctx, cancel := context.WithTimeout(ctx, hostListTimeout)
	defer cancel()
	c, err := l.Dial(dctx, Version)
	if err != nil {
		return nil, r.problem(l, err)
	}
	return &paneStream{c: c}, nil
}

// attach opens the attach stream of HOST:NAME (a.Name) on the host's
// daemon for a terminal view.
func (r serveHosts) attach(ctx context.Context, a proto.AttachArgs) (*paneStream, error) {
	l, n, err := r.link(a.Name)
	if err != nil {
		return nil, err
	}
	ps, err := r.dial(ctx, l)
	if err != nil {
		return nil, err
	}
	actx, cancel := context.WithTimeout(ctx, hostListTimeout)
	defer cancel()
	a.Name = n
	var res proto.AttachResult
	if err := ps.c.Call(actx, proto.OpAttach, a, &res); err != nil {
		ps.Close()
		return nil, r.problem(l, err)
	}
	return ps, nil
}

// Preview is web.Remote's: the screen stream of HOST:NAME over a relay of
// its own. A host whose muster cannot relay streams none: it waits for
// ctx rather than have the page start ssh again and again.
func (r serveHosts) Preview(ctx context.Context, name string, push func(proto.PreviewScreen)) error {
	l, n, err := r.link(name)
	if err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, hostListTimeout)
	c, err := l.Dial(dctx, Version)
	cancel()
	_, skew := errors.AsType[*host.SkewError](err)
	if errors.Is(err, host.ErrNoRelay) || skew {
		<-ctx.Done()
		return nil
	}
	if err != nil {
		return r.problem(l, err)
	}
	first, s, err := openStream[proto.PreviewScreen](ctx, c, proto.OpPreview, proto.PreviewArgs{Name: n})
	if err != nil {
		return r.problem(l, err)
	}
	return follow(first, s, push)
}

// HostItem is web.Remote's.
func (r serveHosts) HostItem(id int64) bool {
	i := id/hostItemBase - 1
	return id > 0 && i >= 0 && i < int64(len(r.cfg.Hosts))
}

// Attention is web.Remote's: the open items of the host holding id.
func (r serveHosts) Attention(ctx context.Context, id int64) ([]proto.AttentionItem, error) {
	if !r.HostItem(id) {
		return nil, fmt.Errorf("attention item %d is no host's", id)
	}
	i := int(id/hostItemBase) - 1
	h := r.cfg.Hosts[i]
	l, err := r.linkTo(h)
	if err != nil {
		return nil, err
	}
	var items []proto.AttentionItem
	err = host.Call(ctx, r.dirs, Version, h, proto.OpAttention, proto.AttentionArgs{}, &items)
	if errors.Is(err, host.ErrUseSSH) {
		var out []byte
		if out, err = l.Run(ctx, nil, h.Muster, "attention", "--json"); err == nil {
			if err := json.Unmarshal(out, &items); err != nil {
				return nil, fmt.Errorf("host %s: bad answer to attention: %w", h.Name, err)
			}
		}
	}
	if err != nil {
		return nil, r.problem(l, err)
	}
	return qualifyItems(i, h.Name, items), nil
}

// capture reads the screen of HOST:NAME.
func (r serveHosts) capture(ctx context.Context, name string) (string, error) {
	l, n, err := r.link(name)
	if err != nil {
		return "", err
	}
	var res proto.CaptureResult
	err = host.Call(ctx, r.dirs, Version, l.Host, proto.OpCapture, proto.CaptureArgs{Name: n}, &res)
	if errors.Is(err, host.ErrUseSSH) {
		var out []byte
		out, err = l.Run(ctx, nil, l.Host.Muster, "capture", "--", n)
		res.Text = string(out)
	}
	if err != nil {
		return "", r.problem(l, err)
	}
	return res.Text, nil
}

// send types keys into HOST:NAME, without Enter.
func (r serveHosts) send(ctx context.Context, name, keys string) error {
	l, n, err := r.link(name)
	if err != nil {
		return err
	}
	err = host.Call(ctx, r.dirs, Version, l.Host, proto.OpSend, proto.SendArgs{Name: n, Text: keys}, nil)
	if errors.Is(err, host.ErrUseSSH) {
		_, err = l.Run(ctx, nil, l.Host.Muster, "send", "--", n, keys)
	}
	if err != nil {
		return r.problem(l, err)
	}
	return nil
}

// ack resolves the hosts' items among ids and returns the ids left for
// this machine's daemon.
func (r serveHosts) ack(ctx context.Context, ids []int64, res *proto.AckResult) ([]int64, error) {
	var local []int64
	byHost := map[int][]int64{}
	for _, id := range ids {
		if !r.HostItem(id) {
			local = append(local, id)
			continue
		}
		i := int(id/hostItemBase) - 1
		byHost[i] = append(byHost[i], id%hostItemBase)
	}
	for i, theirs := range byHost {
		h := r.cfg.Hosts[i]
		l, err := r.linkTo(h)
		if err != nil {
			return nil, err
		}
		var got proto.AckResult
		err = host.Call(ctx, r.dirs, Version, h, proto.OpAck, proto.AckArgs{IDs: theirs}, &got)
		if errors.Is(err, host.ErrUseSSH) {
			var out []byte
			if out, err = l.Run(ctx, nil, append([]string{h.Muster, "ack", "--json", "--"}, idArgs(theirs)...)...); err == nil {
				if err := json.Unmarshal(out, &got); err != nil {
					return nil, fmt.Errorf("host %s: bad answer to ack: %w", h.Name, err)
				}
			}
		}
		if err != nil {
			return nil, r.problem(l, err)
		}
		addHostAcks(res, got, i)
	}
	return local, nil
}

func idArgs(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprint(id)
	}
	return out
}
