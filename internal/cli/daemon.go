package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/daemon"
	"github.com/musterhq/muster/internal/proto"
)

func newDaemonCmd(f *Factory) *cobra.Command {
	var foreground, quiet bool
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the muster daemon (normally started on demand)",
		Long: "Run the daemon that owns every pane. Commands that need it start it on demand;\n" +
			"use --foreground to run it in this terminal with logs on stderr.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dirs, err := f.Dirs()
			if err != nil {
				return err
			}
			if !foreground {
				if c, err := client.DialFrozen(cmd.Context(), dirs); err == nil {
					c.Close()
					return Userf("a muster daemon is already running for this home")
				}
				if _, err := f.Client(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintln(f.IO.ErrOut, "muster daemon started")
				return nil
			}
			if err := dirs.EnsureState(); err != nil {
				return err
			}
			logger, closeLog, err := daemonLogger(filepath.Join(dirs.State, "daemon.log"), f.IO.ErrOut, quiet)
			if err != nil {
				return err
			}
			defer closeLog()
			// MUSTER_CPUPROFILE=FILE profiles the daemon, for benchmarks.
			if path := f.Getenv("MUSTER_CPUPROFILE"); path != "" {
				if pf, err := os.Create(path); err == nil {
					pprof.StartCPUProfile(pf)
					defer func() { pprof.StopCPUProfile(); pf.Close() }()
				}
			}
			cfg, err := config.Load(dirs.ConfigFile())
			if err != nil {
				// A broken config must not keep every pane down.
				logger.Error("config ignored", "err", err)
				fmt.Fprintf(f.IO.ErrOut, "muster: %v (using defaults)\n", err)
			}
			err = daemon.Run(cmd.Context(), daemon.Options{
				Dirs: dirs, Logger: logger, Version: Version, Getenv: f.Getenv,
				Term: cfg.Term, Scrollback: cfg.Scrollback, NotifyCommand: cfg.NotifyCommand,
			})
			if errors.Is(err, daemon.ErrAlreadyRunning) {
				return &UserError{Err: err, Hint: "stop it with `muster daemon stop`", Code: ExitError}
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&foreground, "foreground", false, "run in this terminal instead of in the background")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "log only to the daemon log file")
	cmd.Flags().MarkHidden("quiet")
	cmd.AddCommand(newDaemonStopCmd(f), newDaemonStatusCmd(f))
	return cmd
}

// daemonLogger writes JSON logs to path, rotated once past 10 MB, plus text
// on stderr in the foreground.
func daemonLogger(path string, stderr io.Writer, quiet bool) (*slog.Logger, func(), error) {
	if st, err := os.Stat(path); err == nil && st.Size() > 10<<20 {
		os.Rename(path, path+".1")
	}
	lf, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open daemon log: %w", err)
	}
	handlers := []slog.Handler{slog.NewJSONHandler(lf, &slog.HandlerOptions{Level: slog.LevelInfo})}
	if !quiet {
		handlers = append(handlers, slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewMultiHandler(handlers...)), func() { lf.Close() }, nil
}

func newDaemonStopCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "Stop the daemon and every pane it runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
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
			if err := c.Call(cmd.Context(), proto.OpStop, nil, nil); err != nil {
				return err
			}
			// The daemon closes the connection once every pane is down.
			io.Copy(io.Discard, c.Reader())
			dirs, _ := f.Dirs()
			waitDaemonExit(dirs.Runtime)
			fmt.Fprintln(f.IO.ErrOut, "muster daemon stopped")
			return nil
		},
	}
}

func newDaemonStatusCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether the daemon runs, and its pid and sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// status is frozen too: it shows a daemon of any version.
			c, err := f.frozenClient(cmd.Context())
			if err != nil {
				if errors.Is(err, client.ErrDaemonNotRunning) {
					if asJSON {
						writeJSON(f.IO.Out, map[string]any{"running": false})
					} else {
						fmt.Fprintln(f.IO.Out, "muster daemon is not running")
					}
					return &UserError{Err: errors.New("the daemon is not running"), Code: ExitUnreachable, Hint: "any muster command starts it; or run `muster daemon`"}
				}
				return err
			}
			defer c.Close()
			var st proto.DaemonStatus
			if err := c.Call(cmd.Context(), proto.OpStatus, nil, &st); err != nil {
				return err
			}
			protocol := max(st.Protocol, 1) // protocol 1 did not report it
			if asJSON {
				return writeJSON(f.IO.Out, map[string]any{"running": true, "pid": st.PID, "version": st.Version, "started_at": st.StartedAt, "home": st.Home, "sessions": st.Sessions, "panes": st.Panes, "protocol": protocol})
			}
			fmt.Fprintf(f.IO.Out, "muster daemon %s running, pid %d, since %s\n%d sessions, %d live panes\nstate: %s\n", st.Version, st.PID, st.StartedAt, st.Sessions, st.Panes, st.Home)
			if protocol != proto.ControlVersion {
				fmt.Fprintf(f.IO.Out, "it speaks control protocol %d and this muster %d: run `muster daemon stop` to replace it\n", protocol, proto.ControlVersion)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
