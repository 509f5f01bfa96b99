package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/hookevent"
)

// newHookEventCmd builds `muster hook event PROVIDER`. cmd/muster normally
// runs hookevent.Main before the command tree exists; this command serves
// the same invocation when it comes through cobra (tests, `muster help`).
// Like the fast path it never fails: arguments it cannot use get one line on
// stderr and exit status 0, because a hook that exits 2 blocks the agent.
func newHookEventCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "event PROVIDER",
		Short: "Report a hook payload on stdin as an agent event (" + joinProviders() + ")",
		Long: "Reads one native hook payload of PROVIDER on stdin, maps it to an agent event and\n" +
			"sends it to the pane's events socket (MUSTER_EVENT_SOCKET). Outside a Muster pane,\n" +
			"or when the daemon is down, it does nothing. A provider that reads its hooks' stdout as\n" +
			"JSON gets `{}` there.\n" +
			"MUSTER_HOOK_DEBUG=1 explains on stderr what was sent.",
		Args: cobra.ArbitraryArgs,
		// Flags are not parsed: an unknown one must not turn into exit 2.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-h" || a == "--help" {
					return cmd.Help()
				}
			}
			hookevent.Run(args, hookevent.Options{
				Stdin:  f.IO.In,
				Stdout: f.IO.Out,
				Stderr: f.IO.ErrOut,
				Getenv: f.Getenv,
				Now:    f.now,
			})
			return nil
		},
	}
	return cmd
}

func joinProviders() string { return strings.Join(hookevent.Providers(), ", ") }
