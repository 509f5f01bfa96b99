package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/proto"
)

func newDaemonRestartCmd(f *Factory) *cobra.Command {
	var binary string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "restart",
		Short: "Replace the daemon with this muster binary, keeping every pane",
		Long: "Replace the running daemon with the muster binary as installed now (this command's own,\n" +
			"or --binary), without ending a pane: the daemon re-executes itself in place and the new\n" +
			"binary adopts every pane. Agents keep running with the same pids, screens and history are\n" +
			"kept, attached clients attach again by themselves. If the new binary cannot take the panes\n" +
			"over, the daemon goes on as it was and this command says why.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if wait <= 0 {
				return usageError{fmt.Errorf("--wait must be positive, not %s", wait)}
			}
			exe, err := restartBinary(binary)
			if err != nil {
				return err
			}
			return restartDaemon(cmd.Context(), f, exe, wait)
		},
	}
	cmd.Flags().StringVar(&binary, "binary", "", "the muster binary to restart into (default: this one)")
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the new daemon to answer")
	return cmd
}

// restartBinary is the binary the daemon restarts into, as an absolute
// path with its symlinks resolved: an upgrade that replaces the link
// target is what the daemon must run.
func restartBinary(flag string) (string, error) {
	exe := flag
	if exe == "" {
		self, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find this muster binary: %w", err)
		}
		exe = self
	}
	abs, err := filepath.Abs(exe)
	if err != nil {
		return "", err
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	} else if flag != "" {
		return "", Userf("cannot restart into %s: %v", flag, errors.Unwrap(err))
	}
	return abs, nil
}

func restartDaemon(ctx context.Context, f *Factory, exe string, wait time.Duration) error {
	dirs, err := f.Dirs()
	if err != nil {
		return err
	}
	c, err := f.frozenClient(ctx)
	if err != nil {
		if errors.Is(err, client.ErrDaemonNotRunning) {
			return Userf("the daemon is not running: there is nothing to restart")
		}
		return err
	}
	defer c.Close()
	var before proto.DaemonStatus
	if err := c.Call(ctx, proto.OpStatus, nil, &before); err != nil {
		return err
	}
	token := uuid.NewString()
	start := time.Now()
	err = c.Call(ctx, proto.OpRestart, proto.RestartArgs{Executable: exe, Token: token}, nil)
	var pe *proto.Error
	switch {
	case errors.As(err, &pe) && pe.Code == proto.CodeUnsupported && before.Protocol < proto.ControlVersion:
		return Userf("the running daemon (version %s) is too old to hand its panes over; `muster daemon stop` ends them", before.Version)
	case err != nil && !errors.Is(err, client.ErrConnectionLost):
		return err
	}
	// The old image closes the connection as it hands over.
	c.Conn().SetReadDeadline(time.Now().Add(wait))
	io.Copy(io.Discard, c.Reader())
	deadline := time.Now().Add(wait)
	for {
		rep, st, err := handoffReport(ctx, f, token)
		if err == nil && rep != nil {
			elapsed := time.Since(start).Round(time.Millisecond)
			if rep.Refused != "" {
				return Userf("the new binary did not take the panes over (%s); the daemon (version %s, pid %d) goes on as it was", rep.Refused, st.Version, st.PID)
			}
			fmt.Fprintf(f.IO.ErrOut, "muster daemon restarted in %s: version %s → %s, %d %s kept (pid %d)\n",
				elapsed, rep.FromVersion, st.Version, rep.Panes, plural(rep.Panes, "pane", "panes"), st.PID)
			return nil
		}
		if time.Now().After(deadline) {
			if !dirs.ReadDaemonLock().Held {
				return Userf("the daemon ended during the restart; `muster resume --all` brings its sessions back")
			}
			return Userf("the daemon did not answer within %s of the restart (see %s)", wait, filepath.Join(dirs.State, "daemon.log"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// handoffReport asks the daemon for the report of the restart token
// names; nil while it is not that restart's image yet.
func handoffReport(ctx context.Context, f *Factory, token string) (*proto.HandoffReport, proto.DaemonStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := f.frozenClient(ctx)
	if err != nil {
		return nil, proto.DaemonStatus{}, err
	}
	defer c.Close()
	var st proto.DaemonStatus
	if err := c.Call(ctx, proto.OpStatus, nil, &st); err != nil {
		return nil, st, err
	}
	if st.Handoff == nil || st.Handoff.Token != token {
		return nil, st, nil
	}
	return st.Handoff, st, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
