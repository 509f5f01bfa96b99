package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

func newWorktreeRmCmd(f *Factory) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "rm PATH|SESSION",
		Short: "Remove a worktree that holds no unsaved work and runs no pane",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target := args[0]
			if strings.ContainsRune(target, filepath.Separator) || target == "." {
				abs, err := filepath.Abs(target)
				if err != nil {
					return Userf("bad path %q: %v", target, err)
				}
				target = abs
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			var res proto.WorktreeRemoved
			if err := c.Call(cmd.Context(), proto.OpWorktreeRm, proto.WorktreeRmArgs{Target: target, Force: force}, &res); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "removed %s", termtext.Line(res.Path))
			if res.BranchDeleted {
				fmt.Fprintf(f.IO.Out, " and branch %s", termtext.Line(res.Branch))
			} else {
				fmt.Fprintf(f.IO.Out, "; branch %s kept", termtext.Line(res.Branch))
			}
			fmt.Fprintln(f.IO.Out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "remove it even with changed files or unpushed commits (never a live one)")
	return cmd
}
