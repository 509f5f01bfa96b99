package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/host"
)

func newHostRmCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Forget a host (its sessions keep running there)",
		Args:  cobra.ExactArgs(1),
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
			if err := config.RemoveHost(d.ConfigFile(), h.Name); err != nil {
				return Userf("%v", err)
			}
			host.NewLink(d, cfg.SSH, h).Disconnect(cmd.Context())
			host.Forget(d, h.Name)
			fmt.Fprintf(f.IO.Out, "removed host %s; its sessions keep running there\n", h.Name)
			return nil
		},
	}
}
