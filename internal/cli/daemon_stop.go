package cli

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
)

func newDaemonStopCmd(f *Factory) *cobra.Command {
	var wait time.Duration
	var force bool
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the daemon and every pane it runs",
		Long: "Stop the daemon and every pane it runs. A daemon still running after --wait\n" +
			"is killed with SIGKILL (its panes' programs get SIGHUP); the exit status is\n" +
			"non-zero when it still runs after that. When a session has a run under way or a client\n" +
			"attached, it lists the sessions and asks first (--force does not; without a terminal,\n" +
			"--force is required). `muster daemon restart` replaces the daemon keeping every pane.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if wait <= 0 {
				return usageError{fmt.Errorf("--wait must be positive, not %s", wait)}
			}
			dirs, err := f.Dirs()
			if err != nil {
				return err
			}
			// Any version's daemon serves stop the same way, so that a
			// daemon this binary cannot otherwise talk to can be replaced.
			c, err := f.frozenClient(cmd.Context())
			if err != nil {
				if errors.Is(err, client.ErrDaemonNotRunning) {
					fmt.Fprintln(f.IO.ErrOut, "muster daemon is not running")
					return nil
				}
				return err
			}
			defer c.Close()
			if !force {
				if err := confirmStop(cmd.Context(), f); err != nil {
					return err
				}
			}
			pid := dirs.ReadDaemonLock().PID
			deadline := time.Now().Add(wait)
			err = c.Call(cmd.Context(), proto.OpStop, nil, nil)
			if err != nil && !errors.Is(err, client.ErrConnectionLost) {
				return err
			}
			if err == nil {
				// The daemon closes the connection once every pane is down.
				c.Conn().SetReadDeadline(deadline)
				io.Copy(io.Discard, c.Reader())
			}
			if waitDaemonExit(dirs, deadline) {
				fmt.Fprintln(f.IO.ErrOut, "muster daemon stopped")
				return nil
			}
			return killDaemon(f, dirs, pid, wait)
		},
	}
	cmd.Flags().BoolVarP(&force, "force", "f", false, "stop without asking, even with runs under way or clients attached")
	cmd.Flags().DurationVar(&wait, "wait", 15*time.Second, "how long the daemon may take to close its panes before it is killed")
	return cmd
}

// killDaemon ends a daemon that did not stop within wait with SIGKILL
// and says what happened; it fails when the daemon still runs.
func killDaemon(f *Factory, dirs paths.Dirs, pid int, wait time.Duration) error {
	if h := dirs.ReadDaemonLock(); h.PID != 0 {
		pid = h.PID
	}
	if pid == 0 {
		return Userf("the daemon did not stop within %s and its pid is unknown (see %s)", wait, dirs.DaemonLock())
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return Userf("the daemon (pid %d) did not stop within %s, and SIGKILL failed: %v", pid, wait, err)
	}
	if !waitDaemonExit(dirs, time.Now().Add(5*time.Second)) {
		return Userf("the daemon (pid %d) did not stop within %s and still runs after SIGKILL", pid, wait)
	}
	fmt.Fprintf(f.IO.ErrOut, "muster daemon (pid %d) did not stop within %s; sent SIGKILL, it is gone (its panes' programs got SIGHUP)\n", pid, wait)
	return nil
}

// waitDaemonExit waits until the daemon has exited, which is when its lock
// is free (its panes are closed by then), or the deadline passes.
func waitDaemonExit(dirs paths.Dirs, deadline time.Time) bool {
	for {
		if !dirs.ReadDaemonLock().Held {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
