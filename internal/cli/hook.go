package cli

import (
	"github.com/spf13/cobra"
)

// newHookCmd builds `muster hook`, the commands that provider hooks run.
func newHookCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Commands that agent hooks run (not for interactive use)",
		Long: "Commands that agent hooks run. They read the provider's hook payload on stdin,\n" +
			"exit 0 quickly in every case, and print nothing unless the provider requires JSON.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newHookEventCmd(f), newHookCaptureCmd(f))
	return cmd
}
