package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/termtext"
)

func newHostUpgradeCmd(f *Factory) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "upgrade NAME",
		Short: "Install this muster on a host and restart its daemon into it, keeping every agent",
		Long: "Install this muster on the host (copied and checked by SHA-256 as `host add` does) and\n" +
			"restart the host's daemon into it with the live handoff of `muster daemon restart`: the\n" +
			"new daemon adopts every pane, so the agents there keep running with the same pids. It\n" +
			"asks first; --yes skips the question, and is needed without a terminal.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := f.Dirs()
			if err != nil {
				return err
			}
			cfg, err := f.config()
			if err != nil {
				return err
			}
			h, ok := cfg.Host(args[0])
			if !ok {
				return Userf("no host %q; see `muster host ls`", args[0])
			}
			if h.Muster == "" {
				return Userf("host %s: muster is not installed there yet; run `muster host add %s %s`", h.Name, h.Name, h.Dest)
			}
			if !yes && !f.IO.IsStdinTTY() {
				return &UserError{Err: fmt.Errorf("host upgrade restarts the daemon of host %s: pass --yes to do it without a terminal to ask at", h.Name), Code: ExitUsage}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
			defer cancel()
			return upgradeHost(ctx, f, d, cfg, h, yes)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask first")
	return cmd
}

func upgradeHost(ctx context.Context, f *Factory, d paths.Dirs, cfg config.Config, h config.Host, yes bool) error {
	link := host.NewLink(d, cfg.SSH, h)
	st, running, err := host.DaemonStatus(ctx, link)
	if err != nil {
		return hostError(err)
	}
	line := termtext.Line
	if running && st.Version == Version && h.Muster != "" {
		if err := host.CheckSkew(ctx, link); err == nil {
			fmt.Fprintf(f.IO.Out, "host %s already runs muster %s\n", h.Name, Version)
			return nil
		}
	}
	if !yes {
		what := "its daemon is not running; nothing restarts"
		if running {
			what = fmt.Sprintf("its daemon, muster %s with %d %s, restarts into it; its agents keep running", line(st.Version), st.Sessions, plural(st.Sessions, "session", "sessions"))
		}
		fmt.Fprintf(f.IO.ErrOut, "Upgrade host %s (%s) to muster %s? %s. [y/N] ", h.Name, line(h.Dest), Version, what)
		answer, _ := bufio.NewReader(f.IO.In).ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
		default:
			return Userf("host %s was left as it was", h.Name)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find muster executable: %w", err)
	}
	inst, err := host.Install(ctx, link, Version, exe)
	if err != nil {
		return hostError(err)
	}
	h.Muster = inst.Path
	if err := config.PutHost(d.ConfigFile(), h); err != nil {
		return Userf("%v", err)
	}
	link = host.NewLink(d, cfg.SSH, h)
	if running {
		said, err := host.RestartDaemon(ctx, link, inst.Path)
		if err != nil {
			return hostError(err)
		}
		fmt.Fprintf(f.IO.ErrOut, "host %s: %s\n", h.Name, line(said))
	}
	list, err := host.Sessions(ctx, d, link)
	if err != nil {
		return hostError(err)
	}
	host.MarkSeen(d, h.Name, Version, len(list))
	fmt.Fprintf(f.IO.Out, "host %s: muster %s at %s; %d %s\n", h.Name, Version, line(inst.Path), len(list), plural(len(list), "session", "sessions"))
	return nil
}
