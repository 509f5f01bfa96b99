package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

func newWorktreeLsCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the worktrees, their branch and what removing them would lose",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			var list []proto.WorktreeInfo
			if err := c.Call(cmd.Context(), proto.OpWorktrees, nil, &list); err != nil {
				return err
			}
			if list == nil {
				list = []proto.WorktreeInfo{}
			}
			if asJSON {
				return writeJSON(f.IO.Out, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "no worktrees; start a session in one with `muster new PROVIDER --worktree`")
				return nil
			}
			line := termtext.Line
			tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PATH\tBRANCH\tSESSION\tSTATE")
			for _, w := range list {
				session := line(w.Session)
				if session == "" {
					session = "(" + short(line(w.SessionID)) + ", gone)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", line(tildePath(w.Path)), line(w.Branch), session, worktreeState(w))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}
