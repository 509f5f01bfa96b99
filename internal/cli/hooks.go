package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/hookinstall"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/provider/all"
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

// agentMissing says why provider's CLI is not on this machine ("" when
// one of its executables is on PATH, or when Muster does not launch it).
func agentMissing(f *Factory, provider string) string {
	exes := launchExecutables(provider)
	if len(exes) == 0 {
		return ""
	}
	for _, dir := range filepath.SplitList(f.Getenv("PATH")) {
		for _, exe := range exes {
			if dir == "" {
				dir = "."
			}
			if fi, err := os.Stat(filepath.Join(dir, exe)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				return ""
			}
		}
	}
	return strings.Join(exes, " or ") + " not found on PATH"
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

// launchExecutables are the executables `muster new provider` looks for.
func launchExecutables(provider string) []string {
	l, ok := all.Launch(provider)
	if !ok {
		return nil
	}
	return l.Executables
}
