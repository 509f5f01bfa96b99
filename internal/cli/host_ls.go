package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/termtext"
)

func newHostLsCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List hosts: their state, muster version and sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := f.Dirs()
			if err != nil {
				return err
			}
			cfg, err := f.config()
			if err != nil {
				return err
			}
			var list []host.Status
			for _, l := range host.ListAll(cmd.Context(), d, cfg, Version, hostListTimeout) {
				list = append(list, l.Status)
			}
			if asJSON {
				if list == nil {
					list = []host.Status{}
				}
				return writeJSON(f.IO.Out, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "no hosts; add one with `muster host add NAME DEST`")
				return nil
			}
			tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDEST\tSTATE\tVERSION\tSESSIONS\tLAST SEEN")
			line := termtext.Line
			for _, s := range list {
				seen := "never"
				if t, err := time.Parse(time.RFC3339, s.LastSeen); err == nil {
					seen = age(f.now().Sub(t)) + " ago"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", s.Name, line(s.Dest), s.State, dash(line(s.Version)), s.Sessions, seen)
			}
			tw.Flush()
			for _, s := range list {
				if s.Reason != "" {
					fmt.Fprintf(f.IO.Out, "%s: %s\n", s.Name, line(s.Reason))
				}
				if s.Command != "" {
					fmt.Fprintf(f.IO.Out, "  run once by hand: %s\n", line(s.Command))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
