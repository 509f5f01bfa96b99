package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// This file is op host.call: the daemon holds one relay to each host that
// a CLI command asked something of (`muster relay` over the host's ssh
// master), so that a warm `muster ls` across hosts costs a round trip per
// host instead of an ssh process per host and command. The dialing is
// internal/host's (Options.HostRelay): this layer may not import it.

// hostRelayIdle is how long a relay nobody calls over stays open: its
// `muster relay` on the host and its ssh session cost little, and a
// command run a few minutes later finds it warm.
const hostRelayIdle = 5 * time.Minute

// hostRelayPing is how often a held relay is kept from the host daemon's
// idle timeout (a minute, controlIdleTimeout there), and
// hostRelayPingTimeout how long that may take before the relay counts as
// dropped.
const (
	hostRelayPing        = 30 * time.Second
	hostRelayPingTimeout = 10 * time.Second
)

// HostDialer opens a relay to the daemon of host (a host of config.toml).
// Its failures, and those of the returned Caller's calls, are *proto.Error:
// CodeHostDown when the link failed (the relay is then of no further
// use), CodeNoRelay when the host has none; any other code is the inner
// op's own answer.
type HostDialer func(ctx context.Context, host string) (proto.Caller, error)

// hostRelays are the daemon's relays, one per host, each carrying one
// call at a time (the control protocol answers requests in order).
type hostRelays struct {
	dial HostDialer
	idle time.Duration
	ping time.Duration
	// done is closed with closed: the keepers close their relays.
	done    chan struct{}
	keepers sync.WaitGroup

	mu     sync.Mutex
	hosts  map[string]*hostRelay
	closed bool
}

// hostRelay is one host's relay. Everything but turn is read and
// written only by whoever holds turn.
type hostRelay struct {
	// turn is held by the call in flight (or keep's ping): one slot.
	turn     chan struct{}
	conn     proto.Caller
	lastUsed time.Time
	// keeping: keep runs for conn.
	keeping bool
}

func newHostRelays(dial HostDialer) *hostRelays {
	return &hostRelays{dial: dial, idle: hostRelayIdle, ping: hostRelayPing, hosts: map[string]*hostRelay{}, done: make(chan struct{})}
}

// callable says why op cannot go through host.call, or nil.
func callable(op string) (proto.Op, error) {
	o, ok := proto.Lookup(op)
	switch {
	case !ok:
		return o, proto.UnknownOp(op)
	case o.Name == proto.OpHostCall:
		return o, proto.Errorf(proto.CodeInvalid, "host.call cannot relay host.call")
	case o.Flow != proto.Reply:
		// A wait or a stream would hold the host's one relay for as long
		// as it lasts, an attach passes the terminal; stop and restart
		// end the connection.
		return o, proto.Errorf(proto.CodeInvalid, "op %q cannot go through host.call: only ops answered by one reply can (no waits, streams, attaches, stop or restart)", op)
	}
	return o, nil
}

// hostCall serves op host.call.
func (d *Daemon) hostCall(ctx context.Context, a proto.HostCallArgs) (json.RawMessage, error) {
	if a.Host == "" {
		return nil, proto.Errorf(proto.CodeBadRequest, "host.call needs a host")
	}
	o, err := callable(a.Op)
	if err != nil {
		return nil, err
	}
	// Constraint 6: a process inside a pane drives no other host's
	// sessions through this daemon; reading them is what `muster ls` in a
	// pane does.
	if o.Access != proto.ReadOnly {
		if p := peerOf(ctx)(); p.InPane && !p.Control {
			d.mu.Lock()
			defer d.mu.Unlock()
			return nil, d.forbiddenLocked(p, fmt.Sprintf("it may not call op %q on host %s", a.Op, a.Host),
				"drive another host's sessions from a terminal outside muster")
		}
	}
	if d.hostRelays == nil {
		return nil, proto.Errorf(proto.CodeUnsupported, "this daemon reaches no hosts")
	}
	return d.hostRelays.call(ctx, a.Host, o, a.Args)
}

// call runs op on host's relay, dialing it when there is none. A read-only
// op whose relay dropped is sent once more over a new one: a relay that
// sat idle while the link went away fails its next call. A mutating op is
// not sent again, since the host may have done it before the link broke.
func (r *hostRelays) call(ctx context.Context, host string, o proto.Op, args json.RawMessage) (json.RawMessage, error) {
	h, err := r.take(ctx, host)
	if err != nil {
		return nil, err
	}
	defer r.give(host, h)
	var inArgs any
	if len(args) > 0 {
		inArgs = args
	}
	for attempt := 0; ; attempt++ {
		fresh := false
		if h.conn == nil {
			c, err := r.dial(ctx, host)
			if err != nil {
				return nil, asProtoError(host, err)
			}
			h.conn, fresh = c, true
		}
		var out json.RawMessage
		err := h.conn.Call(ctx, o.Name, inArgs, &out)
		if err == nil {
			return out, nil
		}
		pe := asProtoError(host, err)
		if pe.Code != proto.CodeHostDown {
			return nil, pe
		}
		h.conn.Close()
		h.conn = nil
		if fresh || attempt > 0 || o.Access != proto.ReadOnly || ctx.Err() != nil {
			return nil, pe
		}
	}
}

// asProtoError is err as host.call answers it: the dialer's errors are
// *proto.Error already; anything else is the link failing.
func asProtoError(host string, err error) *proto.Error {
	if pe, ok := errors.AsType[*proto.Error](err); ok {
		return pe
	}
	return proto.Errorf(proto.CodeHostDown, "host %s: unreachable: %v", host, err)
}

// take waits for host's turn (its relay made on first use).
func (r *hostRelays) take(ctx context.Context, host string) (*hostRelay, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, proto.Errorf(proto.CodeUnsupported, "the daemon is stopping")
	}
	h := r.hosts[host]
	if h == nil {
		h = &hostRelay{turn: make(chan struct{}, 1)}
		r.hosts[host] = h
	}
	r.mu.Unlock()
	select {
	case h.turn <- struct{}{}:
		return h, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// give ends a call, keeping the relay up until it has been idle for
// r.idle (or the daemon stops).
func (r *hostRelays) give(host string, h *hostRelay) {
	h.lastUsed = time.Now()
	if r.stopping() {
		h.closeConn()
	} else if h.conn != nil && !h.keeping {
		h.keeping = true
		r.keepers.Go(func() { r.keep(h) })
	}
	<-h.turn
}

func (r *hostRelays) stopping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

func (h *hostRelay) closeConn() {
	if h.conn != nil {
		h.conn.Close()
		h.conn = nil
	}
}

// keep holds h's relay while it is in use: the host's daemon closes a
// control connection that sends nothing for a minute, so an idle relay
// asks for the daemon's status more often than that, until r.idle
// after its last call, when it is closed.
func (r *hostRelays) keep(h *hostRelay) {
	tick := time.NewTicker(r.ping)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-r.done:
		}
		h.turn <- struct{}{}
		if h.conn != nil && !r.stopping() && time.Since(h.lastUsed) < r.idle {
			ctx, cancel := context.WithTimeout(context.Background(), hostRelayPingTimeout)
			err := h.conn.Call(ctx, proto.OpStatus, nil, nil)
			cancel()
			if err == nil {
				<-h.turn
				continue
			}
		}
		h.closeConn()
		h.keeping = false
		<-h.turn
		return
	}
}

// close ends every relay, once the calls in flight (cancelled with the
// daemon's context) have ended.
func (r *hostRelays) close() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.done)
	}
	r.mu.Unlock()
	r.keepers.Wait()
}
