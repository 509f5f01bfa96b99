package cli

import (
	"context"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// hostSession is a row of `muster ls --json` once hosts are configured:
// Host is empty for this machine's sessions.
type hostSession struct {
	Host string `json:"host"`
	proto.SessionInfo
	// Stale: the host does not answer; this is the session as it last
	// listed it.
	Stale bool `json:"stale,omitempty"`
}

// listAcrossHosts lists this machine's sessions and every host's (or
// only onHost's), asking the hosts in parallel, each within
// hostListTimeout; a host that does not answer is shown with its state
// and reason instead of its sessions.
func listAcrossHosts(ctx context.Context, f *Factory, cfg config.Config, onHost string, asJSON bool) error {
	d, err := f.Dirs()
	if err != nil {
		return err
	}
	if onHost != "" {
		h, ok := cfg.Host(onHost)
		if !ok {
			return Userf("no host %q; see `muster host ls`", onHost)
		}
		cfg.Hosts = []config.Host{h}
	}
	done := make(chan []host.Listing, 1)
	go func() { done <- host.ListAll(ctx, d, cfg, Version, hostListTimeout) }()
	var rows []hostSession
	if onHost == "" {
		c, err := f.Client(ctx)
		if err != nil {
			return err
		}
		var local []proto.SessionInfo
		err = c.Call(ctx, proto.OpList, nil, &local)
		c.Close()
		if err != nil {
			return err
		}
		for _, s := range local {
			rows = append(rows, hostSession{SessionInfo: s})
		}
	}
	listings := <-done
	var down []host.Status
	for _, l := range listings {
		if l.Status.State != host.Connected {
			down = append(down, l.Status)
		}
		for _, s := range l.Sessions {
			rows = append(rows, hostSession{Host: l.Status.Name, SessionInfo: s, Stale: l.Stale})
		}
	}
	for i := range rows {
		s := &rows[i].SessionInfo
		s.Title, s.Command, s.Reason = redactSecrets(s.Title), redactSecrets(s.Command), redactSecrets(s.Reason)
	}
	line := termtext.Line
	if asJSON {
		if rows == nil {
			rows = []hostSession{}
		}
		for _, s := range down {
			fmt.Fprintf(f.IO.ErrOut, "muster: host %s %s: %s\n", s.Name, s.State, line(s.Reason))
			if s.Command != "" {
				fmt.Fprintf(f.IO.ErrOut, "  run: %s\n", line(s.Command))
			}
		}
		return writeJSON(f.IO.Out, rows)
	}
	now := f.now()
	if len(rows) > 0 {
		tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "HOST\tNAME\tID\tPROVIDER\tSTATE\tRUN\tPID\tCWD\tAGE")
		for _, r := range rows {
			s := r.SessionInfo
			state := line(s.State)
			if s.State == "exited" && s.ExitCode != nil {
				state = fmt.Sprintf("exited(%d)", *s.ExitCode)
			}
			if r.Stale {
				state += "?"
			}
			run := "-"
			if s.RunState != nil {
				run = line(*s.RunState)
				if s.Attention > 0 {
					run += fmt.Sprintf(" !%d", s.Attention)
				}
			}
			pid := "-"
			if s.State == "running" {
				pid = fmt.Sprint(s.PID)
			}
			cwd := s.CWD
			if r.Host == "" {
				cwd = tildePath(cwd)
			}
			created, _ := time.Parse(time.RFC3339, s.CreatedAt)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dash(r.Host), line(s.Name), short(line(s.ID)), line(s.Provider), state, run, pid,
				line(cwd), age(now.Sub(created)))
		}
		tw.Flush()
		for _, r := range rows {
			if r.Reason != "" {
				fmt.Fprintf(f.IO.Out, "%s: %s\n", line(qualified(r.Host, r.Name)), line(r.Reason))
			}
		}
	} else if len(down) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no sessions; start one with `muster new` (on a host: `muster new --host HOST`)")
	}
	for _, s := range down {
		seen := "never seen"
		if t, err := time.Parse(time.RFC3339, s.LastSeen); err == nil {
			seen = "last seen " + age(now.Sub(t)) + " ago"
		}
		stale := ""
		if slices.ContainsFunc(rows, func(r hostSession) bool { return r.Host == s.Name }) {
			stale = "; its sessions as it last listed them, marked ?"
		}
		fmt.Fprintf(f.IO.Out, "host %s: %s (%s; %s%s)\n", s.Name, s.State, line(s.Reason), seen, stale)
		if s.Command != "" {
			fmt.Fprintf(f.IO.Out, "  run: %s\n", line(s.Command))
		}
	}
	return nil
}

// qualified is a session's name as commands take it.
func qualified(host, name string) string {
	if host == "" {
		return name
	}
	return host + ":" + name
}
