package cli

import (
	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
)

func newKillCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "kill NAME",
		Short: "End a session's process and remove the session",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			return c.Call(cmd.Context(), proto.OpKill, proto.Target{Name: args[0]}, nil)
		},
		ValidArgsFunction: completeSessions(f),
	}
}
