package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/hookinstall"
)

func newHooksRemoveCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:       "remove [PROVIDER...]",
		Short:     "Remove Muster's entries, leaving each file as it was without them",
		ValidArgs: hookinstall.Providers(),
		RunE: func(cmd *cobra.Command, args []string) error {
			provs, err := hookProviders(args)
			if err != nil {
				return err
			}
			env, err := hookEnv(f)
			if err != nil {
				return err
			}
			var failed []string
			for _, p := range provs {
				r, err := hookinstall.Remove(env, p)
				if err != nil {
					fmt.Fprintf(f.IO.ErrOut, "muster: %v\n", err)
					failed = append(failed, p)
					continue
				}
				switch {
				case r.Deleted:
					fmt.Fprintf(f.IO.Out, "%s: removed %s (muster had created it)\n", p, r.Path)
				case r.Changed:
					fmt.Fprintf(f.IO.Out, "%s: removed from %s\n", p, r.Path)
				default:
					fmt.Fprintf(f.IO.Out, "%s: nothing to remove\n", p)
				}
			}
			if len(failed) > 0 {
				return &UserError{Err: fmt.Errorf("hooks not removed for %v", failed), Code: ExitError}
			}
			return nil
		},
	}
}
