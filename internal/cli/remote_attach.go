package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/procfs"
)

// reattachFor bounds how long an attach keeps trying to get its host
// back after the connection dropped, before it gives up and says so.
const reattachFor = 2 * time.Minute

// While attached, a round trip goes through the host's connection every
// linkHeartbeat; one without an answer within linkHeartbeatTimeout means
// the link went silent (a cable pulled, a laptop suspended, a stopped
// sshd), which ssh's own keepalive would notice only after 45 s. The
// attach stream itself is the host muster's and carries no heartbeat.
//
// A probe queues behind the output already on its way, so on a slow link
// under a flood (below about 5 Mbit/s, with ssh's 2 MB channel window) it
// can take longer than the timeout on a live link: a late probe counts as
// silence only when the master read less than linkBusyBytes meanwhile.
// Nobody types that much in a heartbeat, and a paste that does is read
// once, up to the channel window, so it delays the verdict by a heartbeat
// at most.
const (
	linkHeartbeat        = 2 * time.Second
	linkHeartbeatTimeout = 3 * time.Second
	linkBusyBytes        = 4 << 10
)

// linkSilentError is an attach ended because its link stopped answering.
type linkSilentError struct{}

func (linkSilentError) Error() string { return "the connection stopped answering" }

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
			started := time.Now()
			var silent bool
			silent, err = attachWatched(ctx, link, argv)
			if silent {
				err = linkSilentError{}
			} else if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 255 || ctx.Err() != nil {
				return remoteStatus(link, err)
			} else {
				err = fmt.Errorf("the connection was lost")
			}
			if time.Since(started) > time.Second {
				// It was attached: a fresh drop, a fresh budget.
				try, lostAt = 0, time.Time{}
			}
		} else if he, ok := errors.AsType[*host.Error](err); ok && he.State == host.NeedsAttention {
			return hostError(err)
		}
		if lostAt.IsZero() {
			lostAt = time.Now()
			// ssh has left the terminal as it found it: the message is
			// on the main screen, under what the attach showed.
			fmt.Fprintf(os.Stderr, "\r\nmuster: host %s: %v; attaching again…\r\n", link.Host.Name, err)
		}
		if errors.As(err, new(linkSilentError)) {
			// Its master hangs on to the silent connection: start anew.
			link.Drop()
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

// attachWatched runs the host's attach in this terminal while a
// heartbeat checks its link; silent reports that the heartbeat ended it.
// ssh is stopped with SIGTERM, on which it puts the terminal back; in
// case it could not, the terminal's mode from before is restored.
func attachWatched(ctx context.Context, link host.Link, argv []string) (silent bool, err error) {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	run := link.Command(runCtx, true, argv...)
	run.Stdin, run.Stdout, run.Stderr = os.Stdin, os.Stdout, os.Stderr
	run.Cancel = func() error { return run.Process.Signal(syscall.SIGTERM) }
	saved, _ := term.GetState(int(os.Stdin.Fd()))
	if err := run.Start(); err != nil {
		return false, err
	}
	var lost atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		if !link.Shared() {
			// Only ssh's keepalive watches a link without a master.
			return
		}
		w := linkWatch{probe: link.Probe, received: masterReads(link.MasterPID(runCtx))}
		t := time.NewTicker(linkHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
			}
			if w.silent(runCtx) {
				lost.Store(true)
				stop()
				return
			}
		}
	}()
	err = run.Wait()
	stop()
	<-done
	if lost.Load() {
		if saved != nil {
			term.Restore(int(os.Stdin.Fd()), saved)
		}
		return true, err
	}
	return false, err
}

// linkWatch is one attach's heartbeat: probe makes a round trip through
// the link, received says how much its master has read from it so far
// (false when that cannot be read).
type linkWatch struct {
	probe    func(context.Context) error
	received func() (uint64, bool)
	timeout  time.Duration // linkHeartbeatTimeout when 0
}

// silent makes one round trip and reports whether the link went silent:
// no answer within the timeout, and less than linkBusyBytes read
// meanwhile.
func (w linkWatch) silent(ctx context.Context) bool {
	timeout := w.timeout
	if timeout == 0 {
		timeout = linkHeartbeatTimeout
	}
	before, known := w.received()
	pctx, cancel := context.WithTimeout(ctx, timeout)
	err := w.probe(pctx)
	late := pctx.Err() == context.DeadlineExceeded
	cancel()
	if err == nil || !late || ctx.Err() != nil {
		return false
	}
	if after, ok := w.received(); known && ok && after-before >= linkBusyBytes {
		return false
	}
	return true
}

// masterReads reads what the master process pid has read (0: unknown).
func masterReads(pid int) func() (uint64, bool) {
	return func() (uint64, bool) {
		if pid <= 0 {
			return 0, false
		}
		n, err := procfs.FS{}.ReadBytes(pid)
		return n, err == nil
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
