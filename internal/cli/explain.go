package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
)

func init() { register(newExplainCmd) }

type explainOptions struct {
	Name string
	JSON bool
}

func newExplainCmd(f *Factory) *cobra.Command { return newExplainCmdWith(f, nil) }

func newExplainCmdWith(f *Factory, runF func(*explainOptions) error) *cobra.Command {
	var o explainOptions
	cmd := &cobra.Command{
		Use:   "explain NAME [--json]",
		Short: "Say why a session is in its run state",
		Long: "Show the evidence behind a session's run state: the run, the event that put it there (hook,\n" +
			"provider, source, times), the newest event, open attention items, and the recent events with\n" +
			"what each one did (applied, confirmed, late, final).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if runF != nil {
				return runF(&o)
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			var x proto.Explanation
			if err := c.Call(proto.OpExplain, proto.Target{Name: o.Name}, &x); err != nil {
				return err
			}
			if o.JSON {
				return writeJSON(f.IO.Out, x)
			}
			printExplanation(f.IO.Out, x)
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the explanation as JSON")
	return cmd
}

func printExplanation(w io.Writer, x proto.Explanation) {
	if x.State == nil {
		fmt.Fprintf(w, "%s: no run state yet (no agent event has arrived for this session)\n", x.Name)
		return
	}
	state := *x.State
	if x.Terminal != "" && state != x.Terminal {
		state += " (after " + x.Terminal + ")"
	}
	fmt.Fprintf(w, "%s: %s\n", x.Name, state)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  run\t%s\n", *x.RunID)
	started := *x.RunStartedAt
	if x.ImpliedStart {
		started += " (implied by its first event)"
	}
	fmt.Fprintf(tw, "  started\t%s\n", started)
	if x.RunEndedAt != nil {
		fmt.Fprintf(tw, "  ended\t%s\n", *x.RunEndedAt)
		if *x.State != "idle" && x.IdleAt != nil {
			fmt.Fprintf(tw, "  idle at\t%s\n", *x.IdleAt)
		}
	}
	if b := x.Because; b != nil {
		fmt.Fprintf(tw, "  because\t%s\n", evidenceLine(*b))
		fmt.Fprintf(tw, "  \toccurred %s, received %s\n", b.OccurredAt, b.ReceivedAt)
		if b.Message != "" {
			fmt.Fprintf(tw, "  \t%q\n", oneLine(b.Message, 100))
		}
	}
	if l := x.Last; l != nil && x.Because != nil && l.EventID != x.Because.EventID {
		fmt.Fprintf(tw, "  last event\t%s at %s\n", evidenceLine(*l), l.OccurredAt)
	}
	if x.NativeSessionID != "" {
		fmt.Fprintf(tw, "  native id\t%s\n", x.NativeSessionID)
	}
	if x.SurfaceID != "" {
		fmt.Fprintf(tw, "  surface\t%s\n", x.SurfaceID)
	}
	tw.Flush()
	if len(x.Attention) > 0 {
		fmt.Fprintln(w, "attention:")
		for _, it := range x.Attention {
			fmt.Fprintf(w, "  #%d %s: %s\n", it.ID, it.Reason, oneLine(it.Message, 80))
		}
	}
	if len(x.Events) > 0 {
		fmt.Fprintln(w, "recent events:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range x.Events {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", e.OccurredAt, e.Kind, hookOrSource(e.Evidence), e.RunID, e.Effect)
		}
		tw.Flush()
	}
}

func evidenceLine(e proto.Evidence) string {
	s := e.Kind + " from " + e.Source
	if e.HookName != "" {
		s += " " + e.HookName
	}
	return s + " (" + e.Provider + "), event " + e.EventID
}

func hookOrSource(e proto.Evidence) string {
	if e.HookName != "" {
		return e.HookName
	}
	return e.Source
}
