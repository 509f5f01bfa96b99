package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/hookinstall"
	"github.com/musterhq/muster/internal/termtext"
)

func newHooksStatusCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:       "status [PROVIDER...]",
		Short:     "Report installed / outdated / not installed per provider",
		ValidArgs: hookinstall.Providers(),
		RunE: func(cmd *cobra.Command, args []string) error {
			provs, env, exe, err := hookTargets(f, args)
			if err != nil {
				return err
			}
			var reports []hookinstall.Report
			for _, p := range provs {
				reports = append(reports, hookinstall.Status(env, p, exe))
			}
			if asJSON {
				return writeJSON(f.IO.Out, reports)
			}
			tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PROVIDER\tSTATE\tFILE\tDETAIL")
			for _, r := range reports {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Provider, r.State, termtext.Line(tildePath(r.Path)), termtext.Line(r.Detail))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
