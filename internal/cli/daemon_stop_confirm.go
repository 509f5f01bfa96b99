package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// busySession is a live pane that stopping the daemon would interrupt.
type busySession struct {
	name, run string
	clients   int
}

// confirmStop lists the sessions a stop ends and, when one has a run
// under way or a client attached, asks the user first: yes only at a
// terminal. It returns nil to go on.
func confirmStop(ctx context.Context, f *Factory) error {
	live, busy, err := stopImpact(ctx, f)
	if err != nil || busy == 0 {
		// A daemon this client cannot list (another protocol) or one with
		// nothing under way is stopped as before.
		return nil
	}
	if !f.IO.IsStdinTTY() {
		return Userf("%d %s a run under way or a client attached; pass --force to stop the daemon anyway (or `muster daemon restart` to keep them)",
			busy, plural(busy, "session has", "sessions have"))
	}
	fmt.Fprintf(f.IO.ErrOut, "Stopping the daemon ends %d %s:\n", len(live), plural(len(live), "session", "sessions"))
	for _, s := range live {
		line := "  " + termtext.Line(s.name)
		var why []string
		if s.run != "" {
			why = append(why, "run "+s.run)
		}
		if s.clients > 0 {
			why = append(why, fmt.Sprintf("%d attached", s.clients))
		}
		if len(why) > 0 {
			line += " (" + strings.Join(why, ", ") + ")"
		}
		fmt.Fprintln(f.IO.ErrOut, line)
	}
	fmt.Fprint(f.IO.ErrOut, "Stop it? `muster daemon restart` keeps them running. [y/N] ")
	answer, _ := bufio.NewReader(f.IO.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return Userf("the daemon keeps running")
}

// stopImpact returns the live sessions and how many of them are busy.
func stopImpact(ctx context.Context, f *Factory) ([]busySession, int, error) {
	d, err := f.Dirs()
	if err != nil {
		return nil, 0, err
	}
	c, err := client.Dial(ctx, d, Version)
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	var list []proto.SessionInfo
	if err := c.Call(ctx, proto.OpList, nil, &list); err != nil {
		return nil, 0, err
	}
	var live []busySession
	busy := 0
	for _, s := range list {
		if s.State != "running" {
			continue
		}
		b := busySession{name: s.Name, clients: s.Clients}
		if s.RunState != nil {
			switch proto.RunState(*s.RunState) {
			case proto.StateRunning, proto.StateWaitingInput, proto.StateWaitingApproval:
				b.run = *s.RunState
			}
		}
		if b.run != "" || b.clients > 0 {
			busy++
		}
		live = append(live, b)
	}
	return live, busy, nil
}
