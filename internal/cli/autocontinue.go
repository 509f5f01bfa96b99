package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

func newAutocontinueCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "autocontinue NAME on|off",
		Short: "Continue a session once the usage limit it stopped at resets, or not",
		Long: "With autocontinue on, when the session's agent stops at its provider's usage limit and\n" +
			"says when it resets, Muster types the provider's continue once that time (plus\n" +
			"usage_limit.skew) has passed: once, only while the agent is still at that limit, and only\n" +
			"if nobody typed into the pane since it stopped. Off cancels a continue not yet sent.\n" +
			"The default for new sessions is usage_limit.continue in config.toml.",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeSessions(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			var on bool
			switch args[1] {
			case "on":
				on = true
			case "off":
			default:
				return usagef("autocontinue takes on or off, not %q", args[1])
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.Call(cmd.Context(), proto.OpAutocontinue, proto.AutocontinueArgs{Name: args[0], On: on}, nil); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "%s: autocontinue %s\n", termtext.Line(args[0]), args[1])
			return nil
		},
	}
	return cmd
}
