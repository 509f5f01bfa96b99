package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/termtext"
)

func newHostAddCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "add NAME DEST",
		Short: "Add a host: check the connection, install this muster there, record it",
		Long: "Add a host. DEST is anything ssh accepts: an alias from ~/.ssh/config, user@host,\n" +
			"ssh://user@host:port. The connection is checked without prompting (BatchMode); a host\n" +
			"key to accept, a password or an MFA code is left to you, with the ssh command to run once\n" +
			"by hand. A muster of this version is looked for on the host, or this one is copied there\n" +
			"(same OS and architecture, checked by SHA-256). Adding a recorded host again checks it again.",
		Example: "  muster host add gpu me@gpu.example.com\n  muster host add box ssh://me@box:2222",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, dest := args[0], args[1]
			if err := config.CheckHostName(name); err != nil {
				return &UserError{Err: err, Code: ExitUsage}
			}
			if _, ok := all.Lookup(name); ok {
				// show PROVIDER:ID keeps meaning the provider (providerFirst).
				return &UserError{Err: fmt.Errorf("host name %q is a provider's: `muster show %s:ID` would be ambiguous; pick another name", name, name), Code: ExitUsage}
			}
			if err := config.CheckDest(dest); err != nil {
				return &UserError{Err: err, Code: ExitUsage}
			}
			d, err := f.Dirs()
			if err != nil {
				return err
			}
			cfg, err := f.config()
			if err != nil {
				return err
			}
			h := config.Host{Name: name, Dest: dest}
			if old, ok := cfg.Host(name); ok {
				if old.Dest != dest {
					return Userf("host %s is already %s; remove it first with `muster host rm %s`", name, old.Dest, name)
				}
				h = old
			}
			if err := config.PutHost(d.ConfigFile(), h); err != nil {
				return Userf("%v", err)
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find muster executable: %w", err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
			defer cancel()
			link := host.NewLink(d, cfg.SSH, h)
			inst, err := host.Install(ctx, link, Version, exe)
			if err != nil {
				return hostError(err)
			}
			h.Muster = inst.Path
			if err := config.PutHost(d.ConfigFile(), h); err != nil {
				return Userf("%v", err)
			}
			host.MarkSeen(d, name, Version, 0)
			link = host.NewLink(d, cfg.SSH, h)
			list, err := host.Sessions(ctx, d, link)
			if err != nil {
				return hostError(err)
			}
			// ls started the host's daemon if none ran; one that ran
			// already may be older than this muster.
			if st, running, err := host.DaemonStatus(ctx, link); err == nil && running {
				host.MarkSeen(d, name, st.Version, len(list))
				if st.Protocol < proto.ControlVersion {
					fmt.Fprintln(f.IO.ErrOut, "muster: "+termtext.Line(host.OlderDaemon(name, st, Version)))
				}
			}
			how := "found there"
			if len(inst.Copied) > 0 {
				how = "copied " + strings.Join(inst.Copied, " and ") + ", SHA-256 checked"
			}
			fmt.Fprintf(f.IO.Out, "host %s: connected; muster %s at %s (%s); %d sessions\n",
				name, Version, termtext.Line(inst.Path), how, len(list))
			return nil
		},
	}
}
