package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
)

func newCaptureCmd(f *Factory) *cobra.Command {
	var a proto.CaptureArgs
	cmd := &cobra.Command{
		Use:   "capture NAME",
		Short: "Print a session's current screen",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.Scrollback < 0 {
				return usagef("--scrollback must not be negative")
			}
			a.Name = f.sessionArgs(args)[0]
			c, err := f.sessionCaller(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			var res proto.CaptureResult
			if err := c.Call(cmd.Context(), proto.OpCapture, a, &res); err != nil {
				return err
			}
			_, err = fmt.Fprint(f.IO.Out, res.Text)
			return err
		},
		ValidArgsFunction: completeSessions(f),
	}
	cmd.Flags().BoolVar(&a.ANSI, "ansi", false, "keep colours and attributes as escape sequences")
	cmd.Flags().IntVar(&a.Scrollback, "scrollback", 0, "also print up to N lines of history")
	return cmd
}
