package cli

import (
	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
)

func newRenameCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "rename NAME NEW",
		Short: "Rename a session",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			args = f.sessionArgs(args)
			c, err := f.sessionCaller(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			return c.Call(cmd.Context(), proto.OpRename, proto.RenameArgs{Name: args[0], NewName: args[1]}, nil)
		},
		ValidArgsFunction: completeSessions(f),
	}
}
