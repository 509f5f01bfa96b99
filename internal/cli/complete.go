package cli

import (
	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
)

// completeSessions completes session names from a running daemon.
func completeSessions(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := f.RunningClient(cmd.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer c.Close()
		var list []proto.SessionInfo
		if c.Call(cmd.Context(), proto.OpList, nil, &list) != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, s := range list {
			names = append(names, s.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
