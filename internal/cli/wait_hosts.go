package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// waitsAcrossHosts says whether a wait names a session on a host, or
// waits on every session (--any and no NAME) while hosts are configured.
// Without hosts, wait is this machine's alone, as it always was.
func waitsAcrossHosts(f *Factory, o waitOptions) (bool, error) {
	onHost := slices.ContainsFunc(o.Names, func(n string) bool { return strings.Contains(n, ":") })
	if !onHost && !(o.Any && len(o.Names) == 0) {
		return false, nil
	}
	cfg, err := f.config()
	if err != nil {
		if onHost {
			return false, err
		}
		return false, nil
	}
	return onHost || len(cfg.Hosts) > 0, nil
}

// waitPart is the sessions of one machine ("" for this one) a wait is on.
type waitPart struct {
	host  string
	names []string
}

type partResult struct {
	part waitPart
	res  proto.WaitResult
	err  error
}

// runWaitAcrossHosts waits on each machine's sessions at once: this
// machine's daemon for its own, and each host through host.Wait, which
// outlives the link going down. With --any the first session to reach a
// state ends the wait everywhere; without, every machine's must.
func runWaitAcrossHosts(ctx context.Context, f *Factory, o waitOptions) error {
	cfg, err := f.config()
	if err != nil {
		return err
	}
	d, err := f.Dirs()
	if err != nil {
		return err
	}
	everySession := o.Any && len(o.Names) == 0
	var parts []waitPart
	if everySession {
		parts = append(parts, waitPart{})
		for _, h := range cfg.Hosts {
			parts = append(parts, waitPart{host: h.Name})
		}
	} else {
		byHost := map[string]int{}
		for _, n := range o.Names {
			h, name, ok := strings.Cut(n, ":")
			if !ok {
				h, name = "", n
			}
			if h != "" {
				if _, known := cfg.Host(h); !known {
					return Userf("no host %q; add it with `muster host add %s DEST`", h, h)
				}
			}
			if name == "" {
				return usagef("%q names no session", n)
			}
			i, seen := byHost[h]
			if !seen {
				i = len(parts)
				byHost[h] = i
				parts = append(parts, waitPart{host: h})
			}
			parts[i].names = append(parts[i].names, name)
		}
	}
	var deadline time.Time
	if o.Timeout > 0 {
		deadline = time.Now().Add(o.Timeout)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan partResult, len(parts))
	for _, p := range parts {
		go func() {
			r := partResult{part: p}
			if p.host == "" {
				lo := o
				lo.Names = p.names
				r.res, r.err = waitLocal(ctx, f, lo)
			} else {
				h, _ := cfg.Host(p.host)
				spec := host.WaitSpec{Names: p.names, Until: o.Until, Any: o.Any, Deadline: deadline}
				r.res, r.err = host.Wait(ctx, host.NewLink(d, cfg.SSH, h), spec, func(ev host.LinkEvent) {
					if ev.Err != nil {
						fmt.Fprintf(f.IO.ErrOut, "muster: host %s: %s; reconnecting\n", ev.Host, termtext.Line(ev.Err.Error()))
					} else {
						fmt.Fprintf(f.IO.ErrOut, "muster: host %s: connected again\n", ev.Host)
					}
				})
			}
			for i := range r.res.Sessions {
				r.res.Sessions[i].Name = qualified(p.host, r.res.Sessions[i].Name)
			}
			results <- r
		}()
	}
	var out proto.WaitResult
	status := ""
	pending := len(parts)
	for pending > 0 {
		r := <-results
		pending--
		if r.err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if everySession && r.part.host != "" {
				// One host that cannot be waited on (it needs a person,
				// or has no muster) does not stop the wait on the others.
				fmt.Fprintf(f.IO.ErrOut, "muster: not waiting on host %s: %s\n", r.part.host, termtext.Line(hostError(r.err).Error()))
				continue
			}
			return waitHostError(r.err)
		}
		out.Sessions = append(out.Sessions, r.res.Sessions...)
		switch {
		case o.Any && r.res.Status == proto.WaitReached,
			!o.Any && r.res.Status == proto.WaitGone:
			status, pending = r.res.Status, 0
		case r.res.Status == proto.WaitTimeout || status == "":
			status = r.res.Status
		}
	}
	cancel()
	if status == "" {
		return Userf("no machine left to wait on")
	}
	out.Status = status
	return reportWait(f, o, out)
}

// waitHostError keeps the exit status of the host's own wait (3: a
// session is gone there).
func waitHostError(err error) error {
	if re, ok := errors.AsType[*host.RemoteExit](err); ok {
		return &UserError{Err: errors.New(strings.TrimPrefix(termtext.Line(re.Error()), "muster: ")), Code: re.Code}
	}
	return hostError(err)
}
