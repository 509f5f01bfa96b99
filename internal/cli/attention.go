package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

type attentionOptions struct {
	All  bool
	JSON bool
}

func newAttentionCmd(f *Factory) *cobra.Command {
	return newAttentionCmdWith(f, nil)
}

func newAttentionCmdWith(f *Factory, runF func(*attentionOptions) error) *cobra.Command {
	var o attentionOptions
	cmd := &cobra.Command{
		Use:   "attention [--all] [--json]",
		Short: "List what needs you: approvals, questions, failures, disconnects, long runs that finished",
		Long: "List the attention drawer: open items, oldest first. An item resolves when its run moves on\n" +
			"or when you acknowledge it with `muster ack ID`; --all also lists items resolved in the last 24 hours.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o)
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			var items []proto.AttentionItem
			if err := c.Call(cmd.Context(), proto.OpAttention, proto.AttentionArgs{All: o.All}, &items); err != nil {
				return err
			}
			if o.JSON {
				if items == nil {
					items = []proto.AttentionItem{}
				}
				return writeJSON(f.IO.Out, items)
			}
			printAttention(f.IO.Out, items, o.All, f.now())
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.All, "all", false, "also list items resolved in the last 24 hours")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print a JSON array")
	return cmd
}

func printAttention(w io.Writer, items []proto.AttentionItem, all bool, now time.Time) {
	if len(items) == 0 {
		fmt.Fprintln(w, "Nothing needs your attention.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "ID\tSESSION\tREASON\tAGE\tMESSAGE"
	if all {
		header += "\tSTATUS"
	}
	fmt.Fprintln(tw, header)
	for _, it := range items {
		line := fmt.Sprintf("%d\t%s\t%s\t%s\t%s", it.ID, itemSession(it), termtext.Line(it.Reason), itemAge(it.OpenedAt, now),
			termtext.Clip(it.Message, 60))
		if all {
			status := "open"
			if !it.Open {
				status = "resolved: " + termtext.Line(it.Resolution)
			}
			line += "\t" + status
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

// itemAge renders how long ago an RFC 3339 time was, coarsely.
func itemAge(ts string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "?"
	}
	return age(max(0, now.Sub(t)))
}

// itemSession names an item's session for a terminal.
func itemSession(it proto.AttentionItem) string {
	if it.SessionName != "" {
		return termtext.Line(it.SessionName)
	}
	return termtext.Line(it.SessionID)
}
