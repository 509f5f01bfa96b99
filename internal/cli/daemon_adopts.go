package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/daemon"
)

// newDaemonAdoptsCmd answers a daemon that is about to restart into
// this binary: whether it adopts panes frozen in that format.
func newDaemonAdoptsCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "adopts FORMAT",
		Short:  "Say whether this binary adopts a restarting daemon's panes",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil {
				return usageError{fmt.Errorf("FORMAT must be a number, not %q", args[0])}
			}
			if err := daemon.CanAdopt(n); err != nil {
				return Userf("%v", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), daemon.AdoptsLine(n))
			return nil
		},
	}
}
