package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
)

// This file is both ends of op host.call as far as ssh goes: the local
// daemon's dialer (RelayDialer), and the commands' way of asking a host
// through that daemon (viaDaemon), which costs no ssh process once the
// daemon's relay to the host is up.

// RelayDialer is what the local daemon dials a host's relay with: the
// host as config.toml says now (hosts are added while the daemon runs),
// its failures as op host.call answers them.
func RelayDialer(dirs paths.Dirs, version string) func(ctx context.Context, name string) (proto.Caller, error) {
	return func(ctx context.Context, name string) (proto.Caller, error) {
		cfg, err := config.Load(dirs.ConfigFile())
		if err != nil {
			return nil, proto.Errorf(proto.CodeInvalid, "%v", err)
		}
		h, ok := cfg.Host(name)
		if !ok {
			return nil, proto.Errorf(proto.CodeNotFound, "no host %q in config.toml", name)
		}
		l := NewLink(dirs, cfg.SSH, h)
		c, err := l.Dial(ctx, version)
		if err != nil {
			return nil, relayFailure(l, err)
		}
		return relayCaller{c: c, l: l}, nil
	}
}

// relayFailure is a failed dial as host.call answers it.
func relayFailure(l Link, err error) *proto.Error {
	if _, ok := errors.AsType[*SkewError](err); ok || errors.Is(err, ErrNoRelay) {
		return proto.Errorf(proto.CodeNoRelay, "%v", err)
	}
	if he, ok := errors.AsType[*Error](err); ok {
		return downError(he)
	}
	return downError(&Error{Host: l.Host.Name, State: Unreachable, Reason: err.Error()})
}

// downError carries e across op host.call; hostError reads it back.
func downError(e *Error) *proto.Error {
	return &proto.Error{Code: proto.CodeHostDown, Message: e.Error(), Hint: e.Command}
}

// hostError is the *Error a CodeHostDown answer carries (downError's
// message: "host NAME: STATE: REASON[; run once by hand: COMMAND]").
func hostError(name string, pe *proto.Error) *Error {
	rest := strings.TrimPrefix(pe.Message, "host "+name+": ")
	for _, st := range []string{Unreachable, Connecting, NeedsAttention} {
		if reason, ok := strings.CutPrefix(rest, st+": "); ok {
			if pe.Hint != "" {
				reason = strings.TrimSuffix(reason, "; run once by hand: "+pe.Hint)
			}
			return &Error{Host: name, State: st, Reason: reason, Command: pe.Hint}
		}
	}
	return &Error{Host: name, State: Unreachable, Reason: rest}
}

// relayCaller is a relay as the daemon holds it: a call that fails but
// for the inner op's own answer is the link failing.
type relayCaller struct {
	c *client.Client
	l Link
}

func (r relayCaller) Call(ctx context.Context, op string, args, out any) error {
	err := r.c.Call(ctx, op, args, out)
	if err == nil {
		return nil
	}
	if pe, ok := errors.AsType[*proto.Error](err); ok {
		return pe
	}
	if ctx.Err() != nil {
		// A link gone silent (the caller gave up waiting), dropped as
		// Run drops it: the next dial starts a new master. A plain
		// cancel is the daemon stopping, which leaves the master to
		// the attaches that share it.
		if !errors.Is(context.Cause(ctx), context.Canceled) {
			r.l.dropMaster()
		}
		return downError(&Error{Host: r.l.Host.Name, State: Connecting, Reason: "no answer yet"})
	}
	return downError(&Error{Host: r.l.Host.Name, State: Unreachable, Reason: err.Error()})
}

func (r relayCaller) Close() error { return r.c.Close() }

// ErrUseSSH: the local daemon cannot relay to the host (no daemon, one
// without host.call, a host without relay or in version skew), and the op
// was not sent: ask over ssh as before, which reports skew in full.
var ErrUseSSH = errors.New("no relay through the local daemon")

// errUseSSH is ErrUseSSH by the name this package's listings test for.
var errUseSSH = ErrUseSSH

// Call calls op on host h through the local daemon's relay to it,
// decoding the result into out, as a command on HOST:NAME does when it
// needs no terminal. An unreachable host is an *Error, as over ssh; the
// op's own refusal is its *proto.Error. ErrUseSSH means asking over ssh
// instead: the op did not reach the host.
func Call(ctx context.Context, dirs paths.Dirs, version string, h config.Host, op string, args, out any) error {
	return viaDaemon(ctx, dirs, version, h, op, args, out)
}

// viaDaemon is Call (CodeUnsupported: a local daemon without host.call,
// or an op the host does not serve, which its muster then reports).
func viaDaemon(ctx context.Context, dirs paths.Dirs, version string, h config.Host, op string, args, out any) error {
	if version == "" {
		return errUseSSH
	}
	c, err := client.Dial(ctx, dirs, version)
	if err != nil {
		return errUseSSH
	}
	defer c.Close()
	var raw json.RawMessage
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return err
		}
		raw = b
	}
	var res json.RawMessage
	err = c.Call(ctx, proto.OpHostCall, proto.HostCallArgs{Host: h.Name, Op: op, Args: raw}, &res)
	if err == nil {
		if len(res) == 0 || out == nil {
			return nil
		}
		return json.Unmarshal(res, out)
	}
	pe, ok := errors.AsType[*proto.Error](err)
	switch {
	case ok && pe.Code == proto.CodeHostDown:
		he := hostError(h.Name, pe)
		if he.State == NeedsAttention {
			// The daemon's ssh runs with the environment it was started
			// in; this command's (a fresh ssh agent, say) may get in.
			return errUseSSH
		}
		return he
	case ok && (pe.Code == proto.CodeNoRelay || pe.Code == proto.CodeUnsupported):
		return errUseSSH
	case ok:
		return pe
	case ctx.Err() != nil:
		return &Error{Host: h.Name, State: Connecting, Reason: "no answer yet"}
	}
	if o, ok := proto.Lookup(op); !ok || o.Access != proto.ReadOnly {
		// The local daemon went away mid-call: the host may have done
		// it, and asking again over ssh could do it twice.
		return fmt.Errorf("host %s: the local daemon's relay broke off, and %s may or may not have happened there: %w", h.Name, op, err)
	}
	return errUseSSH
}
