package cli

import (
	"fmt"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/hookinstall"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/termtext"
)

func newHooksCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install, check or remove Muster's hooks in each agent's own config",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newHooksSetupCmd(f), newHooksStatusCmd(f), newHooksRemoveCmd(f))
	return cmd
}

func hookEnv(f *Factory) (hookinstall.Env, error) {
	home := f.Getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return hookinstall.Env{}, fmt.Errorf("find home directory: %w", err)
		}
		home = h
	}
	return hookinstall.Env{Home: home, Getenv: f.Getenv}, nil
}

func hookProviders(args []string) ([]string, error) {
	if len(args) == 0 {
		return hookinstall.Providers(), nil
	}
	for _, p := range args {
		if !slices.Contains(hookinstall.Providers(), p) {
			return nil, usagef("no hooks for provider %q (known: %v)", p, hookinstall.Providers())
		}
	}
	return args, nil
}

// hookTargets resolves what setup and status act on: the providers, their
// homes and the muster binary the hooks will run.
func hookTargets(f *Factory, args []string) ([]string, hookinstall.Env, string, error) {
	provs, err := hookProviders(args)
	if err != nil {
		return nil, hookinstall.Env{}, "", err
	}
	env, err := hookEnv(f)
	if err != nil {
		return nil, hookinstall.Env{}, "", err
	}
	exe, err := f.musterPath()
	return provs, env, exe, err
}

func (f *Factory) musterPath() (string, error) {
	dirs, err := f.Dirs()
	if err != nil {
		return "", err
	}
	if err := dirs.EnsureState(); err != nil {
		return "", err
	}
	return paths.StableExecutable(dirs.State)
}

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
