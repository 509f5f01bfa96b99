package cli

import (
	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
)

func newSendCmd(f *Factory) *cobra.Command {
	var enter bool
	cmd := &cobra.Command{
		Use:   "send NAME TEXT",
		Short: "Type text into a session's pane",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			return c.Call(cmd.Context(), proto.OpSend, proto.SendArgs{Name: args[0], Text: args[1], Enter: enter}, nil)
		},
		ValidArgsFunction: completeSessions(f),
	}
	cmd.Flags().BoolVarP(&enter, "enter", "e", false, "press Enter after the text")
	return cmd
}
