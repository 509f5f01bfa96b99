package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/daemon"
	"github.com/musterhq/muster/internal/host"
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
			// The daemon's live heap is small and steady (screens,
			// compressed scrollback); what the default GOGC=100 adds on
			// top is garbage from parsing output, held until the heap
			// doubles. Half that slack: corebench -phases throughput,rss
			// alternated at load 2-3 gave 0.39-0.41x tmux's RSS per pane
			// instead of 0.50-0.53x, with no loss of throughput (socket
			// client 51.5/47.2 MB/s against 55.2/39.8). GOGC still wins.
			if f.Getenv("GOGC") == "" {
				debug.SetGCPercent(50)
			}
			// MUSTER_CPUPROFILE=FILE profiles the daemon, for benchmarks.
			if path := f.Getenv("MUSTER_CPUPROFILE"); path != "" {
				if pf, err := os.Create(path); err == nil {
					pprof.StartCPUProfile(pf)
					defer func() { pprof.StopCPUProfile(); pf.Close() }()
				}
			}
			cfg, err := f.Config()
			if err != nil {
				// A broken config must not keep every pane down.
				logger.Error("config ignored", "err", err)
				fmt.Fprintf(f.IO.ErrOut, "muster: %v (using defaults)\n", err)
			}
			err = daemon.Run(cmd.Context(), daemon.Options{
				Dirs: dirs, Logger: logger, Version: Version, Getenv: f.Getenv,
				Term: cfg.Term, Scrollback: cfg.Scrollback, WindowSize: cfg.WindowSize,
				ScrollbackBytes: cfg.ScrollbackBytes, ScrollbackTotalBytes: cfg.ScrollbackTotalBytes, NotifyCommand: cfg.NotifyArgv(),
				Notices: f.IO.ErrOut, PanesPerPane: cfg.Limits.PanesPerPane, EmulatorCells: cfg.Limits.EmulatorCells,
				CostInterval: costInterval(cfg.Cost), MemoryCeiling: cfg.Cost.MemoryCeilingBytes, SessionMemoryCeilings: cfg.Cost.SessionCeilings,
				WorktreeDir: cfg.Worktree.Dir, ContinueAfterLimit: cfg.UsageLimit.Continue, LimitSkew: limitSkew(cfg.UsageLimit),
				HostRelay: host.RelayDialer(dirs, Version),
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
	cmd.AddCommand(newDaemonStopCmd(f), newDaemonStatusCmd(f), newDaemonRestartCmd(f), newDaemonAdoptsCmd())
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

// costInterval is config.toml's sampling interval as daemon.Options
// takes it: negative when sampling is off.
func costInterval(c config.Cost) time.Duration {
	if c.IntervalDuration <= 0 {
		return -1
	}
	return c.IntervalDuration
}

// limitSkew is config.toml's usage_limit.skew as daemon.Options takes it:
// negative for none.
func limitSkew(u config.UsageLimit) time.Duration {
	if u.SkewDuration <= 0 {
		return -1
	}
	return u.SkewDuration
}
