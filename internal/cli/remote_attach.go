package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/musterhq/muster/internal/host"
)

// reattachFor bounds how long an attach keeps trying to get its host
// back after the connection dropped, before it gives up and says so.
const reattachFor = 2 * time.Minute

// reattach runs the host's `muster attach` in this terminal, and when
// the connection drops under it (ssh's 255: the master was killed, the
// host went away) says so and attaches again, after a bounded, jittered
// backoff, until the attach ends on its own (detach, the session's end)
// or the host stays away for reattachFor. The session keeps running on
// its host all along: its daemon owns the pane, and an attach is only a
// view of it.
func reattach(ctx context.Context, link host.Link, argv []string) error {
	var lostAt time.Time
	for try := 0; ; try++ {
		err := link.Connect(ctx)
		if err == nil {
			run := link.Command(ctx, true, argv...)
			run.Stdin, run.Stdout, run.Stderr = os.Stdin, os.Stdout, os.Stderr
			started := time.Now()
			err = run.Run()
			if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 255 || ctx.Err() != nil {
				return remoteStatus(link, err)
			}
			if time.Since(started) > time.Second {
				// It was attached: a fresh drop, a fresh budget.
				try, lostAt = 0, time.Time{}
			}
			err = fmt.Errorf("the connection was lost")
		} else if he, ok := errors.AsType[*host.Error](err); ok && he.State == host.NeedsAttention {
			return hostError(err)
		}
		if lostAt.IsZero() {
			lostAt = time.Now()
			// ssh has left the terminal as it found it: the message is
			// on the main screen, under what the attach showed.
			fmt.Fprintf(os.Stderr, "\r\nmuster: host %s: %v; attaching again…\r\n", link.Host.Name, err)
		}
		if time.Since(lostAt) > reattachFor {
			return &UserError{Err: fmt.Errorf("host %s: gave up attaching again after %s: %v", link.Host.Name, reattachFor, err), Code: ExitUnreachable}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(host.DefaultBackoff.Delay(try)):
		}
	}
}

// attachFromDashboard attaches to a host's session chosen in the
// dashboard, as `muster attach HOST:NAME` does.
func attachFromDashboard(ctx context.Context, f *Factory, l host.Link, name string) error {
	argv := []string{l.Host.Muster, "attach"}
	if c, err := f.Config(); err == nil && c.Keys.Detach != "" {
		argv = append(argv, "--detach-key="+c.Keys.Detach)
	}
	err := runOnHost(ctx, f, l, true, true, append(argv, "--", name))
	if re, ok := errors.AsType[*remoteExit](err); ok {
		if re.code == ExitOK {
			return nil
		}
		return Userf("the attach on host %s ended with status %d", l.Host.Name, re.code)
	}
	return err
}
