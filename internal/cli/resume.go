package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

func newResumeCmd(f *Factory) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "resume NAME...|--all",
		Short: "Relaunch sessions whose process died with the daemon, in the same conversation",
		Long: "Relaunch sessions in their original directory with the provider's resume command and\n" +
			"the captured native id (or the original new-session command while the id is provisional).",
		RunE: func(cmd *cobra.Command, args []string) error {
			if !all && len(args) == 0 {
				return usagef("name a session to resume, or pass --all")
			}
			env := map[string]string{}
			for _, kv := range os.Environ() {
				if k, v, ok := strings.Cut(kv, "="); ok {
					env[k] = v
				}
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			var out []proto.ResumeOutcome
			if err := c.Call(cmd.Context(), proto.OpResume, proto.ResumeArgs{Names: args, All: all, Env: env}, &out); err != nil {
				return err
			}
			if out == nil {
				out = []proto.ResumeOutcome{}
			}
			if asJSON {
				writeJSON(f.IO.Out, out)
			} else if len(out) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "nothing to resume")
			}
			failed := 0
			for _, o := range out {
				if !o.Resumed {
					failed++
				}
				if asJSON {
					continue
				}
				if o.Resumed && o.NewConversation {
					fmt.Fprintf(f.IO.Out, "%s: resumed as a new conversation: no id was captured\n", termtext.Line(o.Name))
				} else if o.Resumed {
					fmt.Fprintf(f.IO.Out, "%s: resumed\n", termtext.Line(o.Name))
				} else {
					fmt.Fprintf(f.IO.Out, "%s: not resumed: %s\n", termtext.Line(o.Name), termtext.Line(o.Reason))
				}
			}
			if failed > 0 {
				return &UserError{Err: fmt.Errorf("%d of %d sessions not resumed", failed, len(out)), Code: ExitError}
			}
			return nil
		},
		ValidArgsFunction: completeSessions(f),
	}
	cmd.Flags().BoolVar(&all, "all", false, "resume every restorable session")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
