package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/worktree"
)

func newWorktreeSetupCmd(f *Factory) *cobra.Command {
	var dir, yes string
	cmd := &cobra.Command{
		Use:   "setup [--dir REPO] [--yes SHA256]",
		Short: "Review a repository's worktree setup files and consent to run them",
		Long: "A repository may ask for work in each new worktree: " + worktree.SetupScript + " (a script run with sh\n" +
			"in the new tree) and " + worktree.IncludeFile + " (ignored files, such as .env, copied into it).\n" +
			"They run only after you consented to their exact content: this prints them and their SHA-256\n" +
			"and asks; --yes SHA256 consents without asking when the hash is still that one.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = wd
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return Userf("bad directory %q: %v", dir, err)
			}
			repo, err := worktree.Toplevel(cmd.Context(), abs)
			if err != nil {
				return Userf("%v", err)
			}
			s, err := worktree.ReadSetup(repo)
			if err != nil {
				return Userf("%v", err)
			}
			if s.Empty() {
				return Userf("%s has no %s or %s: nothing to consent to", repo, worktree.SetupScript, worktree.IncludeFile)
			}
			if yes == "" {
				for _, file := range []struct {
					name string
					body []byte
				}{{worktree.SetupScript, s.Script}, {worktree.IncludeFile, s.Include}} {
					if file.body != nil {
						fmt.Fprintf(f.IO.Out, "── %s ──\n%s\n", file.name, termtext.Strip(string(file.body)))
					}
				}
				fmt.Fprintf(f.IO.Out, "sha256 %s\n", s.Hash)
				if !f.IO.IsStdinTTY() {
					return Userf("not a terminal: pass --yes %s to consent to this content", s.Hash)
				}
				fmt.Fprintf(f.IO.Out, "run these for every new worktree of %s? [y/N] ", repo)
				answer, _ := bufio.NewReader(f.IO.In).ReadString('\n')
				if a := strings.TrimSpace(strings.ToLower(answer)); a != "y" && a != "yes" {
					return Userf("no consent given; nothing recorded")
				}
				yes = s.Hash
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.Call(cmd.Context(), proto.OpSetupConsent, proto.SetupConsentArgs{Repo: repo, SHA256: yes}, nil); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "consented: new worktrees of %s run these setup files (sha256 %s…) until they change\n", repo, yes[:min(12, len(yes))])
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "C", "", "the repository (default: the current directory's)")
	cmd.Flags().StringVar(&yes, "yes", "", "consent without asking, if the files' SHA-256 is this one")
	return cmd
}
