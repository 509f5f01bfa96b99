package cli

import (
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/hookinstall"
	"github.com/musterhq/muster/internal/paths"
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
