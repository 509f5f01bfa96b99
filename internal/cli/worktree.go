package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

func newWorktreeCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worktree",
		Short: "List and remove the git worktrees sessions were started in",
		Long: "Sessions started with `muster new --worktree` run in a git worktree of their own.\n" +
			"`worktree rm` removes one only when nothing would be lost: never while a pane runs in it\n" +
			"(not even with --force), and not while it has changed or untracked files or commits on\n" +
			"no remote (--force removes those, keeping an unpushed branch).",
	}
	cmd.AddCommand(newWorktreeLsCmd(f), newWorktreeRmCmd(f), newWorktreeSetupCmd(f))
	return cmd
}

// worktreeState says what keeps a worktree: live, dirty, unpushed, or
// that it may go.
func worktreeState(w proto.WorktreeInfo) string {
	if !w.Exists {
		return "missing"
	}
	var parts []string
	if w.Live {
		parts = append(parts, "live")
	}
	if w.Dirty > 0 {
		parts = append(parts, fmt.Sprintf("dirty (%d files)", w.Dirty))
	}
	if w.Unpushed > 0 {
		parts = append(parts, fmt.Sprintf("unpushed (%d commits)", w.Unpushed))
	} else if w.Ahead > 0 {
		parts = append(parts, fmt.Sprintf("%d commits ahead, pushed", w.Ahead))
	}
	if len(parts) == 0 {
		return "clean"
	}
	return strings.Join(parts, ", ")
}

// branchCell is a session's BRANCH column: its worktree's mark, or "-".
func branchCell(w *proto.WorktreeInfo) string {
	if w == nil {
		return "-"
	}
	return termtext.Line(w.BranchMark())
}
