package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/hookinstall"
)

func newHooksSetupCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:       "setup [PROVIDER...]",
		Short:     "Install the capture adapter and the lifecycle helper into each provider's config",
		ValidArgs: hookinstall.Providers(),
		RunE: func(cmd *cobra.Command, args []string) error {
			provs, env, exe, err := hookTargets(f, args)
			if err != nil {
				return err
			}
			var results []hookinstall.Result
			var failed []string
			for _, p := range provs {
				if len(args) == 0 {
					// Without names, only the agents this machine has: a
					// config written for a CLI that is not installed is
					// clutter, and OpenCode's plugin would npm-install on
					// its first start.
					if missing := agentMissing(f, p); missing != "" {
						if !asJSON {
							fmt.Fprintf(f.IO.Out, "%s: skipped: %s (muster hooks setup %s installs anyway)\n", p, missing, p)
						}
						continue
					}
				}
				r, err := hookinstall.Setup(env, p, exe)
				if err != nil {
					fmt.Fprintf(f.IO.ErrOut, "muster: %v\n", err)
					failed = append(failed, p)
					continue
				}
				results = append(results, r)
				if asJSON {
					continue
				}
				switch {
				case r.Changed:
					fmt.Fprintf(f.IO.Out, "%s: installed in %s\n", p, r.Path)
				default:
					fmt.Fprintf(f.IO.Out, "%s: already installed in %s\n", p, r.Path)
				}
				for _, n := range r.Notes {
					fmt.Fprintf(f.IO.Out, "  note: %s\n", n)
				}
			}
			if asJSON {
				writeJSON(f.IO.Out, results)
			}
			if len(failed) > 0 {
				return &UserError{Err: fmt.Errorf("hooks not installed for %v; their files were left unchanged", failed), Code: ExitError}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
