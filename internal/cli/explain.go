package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proccost"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

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
			"what each one did (applied, confirmed, late, final). With a live pane, what its terminal says,\n" +
			"what its processes cost, and the transcript files skipped as hostile while following its agent\n" +
			"(a FIFO, a socket, a symbolic link or its loop, a line over 16 MiB).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = f.sessionArgs(args)[0]
			if runF != nil {
				return runF(&o)
			}
			c, err := f.sessionCaller(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			var x proto.Explanation
			if err := c.Call(cmd.Context(), proto.OpExplain, proto.Target{Name: o.Name}, &x); err != nil {
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

// printExplanation writes x for a terminal. Every string in it may have
// come from an agent (messages, hook names, ids), so each goes through
// termtext.
func printExplanation(w io.Writer, x proto.Explanation) {
	line := termtext.Line
	name := line(x.Name)
	if x.State == nil {
		fmt.Fprintf(w, "%s: no run state yet (no agent event has arrived for this session)\n", name)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		printActivity(tw, x.Activity)
		printCost(tw, x.Cost)
		tw.Flush()
		printItems(w, x.Attention)
		return
	}
	state := line(*x.State)
	if x.Terminal != "" && *x.State != x.Terminal {
		state += " (after " + line(x.Terminal) + ")"
	}
	fmt.Fprintf(w, "%s: %s\n", name, state)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  run\t%s\n", line(deref(x.RunID)))
	started := line(deref(x.RunStartedAt))
	if x.ImpliedStart {
		started += " (implied by its first event)"
	}
	fmt.Fprintf(tw, "  started\t%s\n", started)
	if x.RunEndedAt != nil {
		fmt.Fprintf(tw, "  ended\t%s\n", line(*x.RunEndedAt))
		if *x.State != "idle" && x.IdleAt != nil {
			fmt.Fprintf(tw, "  idle at\t%s\n", line(*x.IdleAt))
		}
	}
	if b := x.Because; b != nil {
		fmt.Fprintf(tw, "  because\t%s\n", evidenceLine(*b))
		fmt.Fprintf(tw, "  \toccurred %s, received %s\n", line(b.OccurredAt), line(b.ReceivedAt))
		if b.Message != "" {
			fmt.Fprintf(tw, "  \t%q\n", termtext.Clip(b.Message, 100))
		}
	}
	if l := x.Last; l != nil && x.Because != nil && l.EventID != x.Because.EventID {
		fmt.Fprintf(tw, "  last event\t%s at %s\n", evidenceLine(*l), line(l.OccurredAt))
	}
	if x.NativeSessionID != "" {
		fmt.Fprintf(tw, "  native id\t%s\n", line(x.NativeSessionID))
	}
	if x.SurfaceID != "" {
		fmt.Fprintf(tw, "  surface\t%s\n", line(x.SurfaceID))
	}
	printActivity(tw, x.Activity)
	printCost(tw, x.Cost)
	printLimit(tw, x.Limit)
	tw.Flush()
	printItems(w, x.Attention)
	if len(x.Events) > 0 {
		fmt.Fprintln(w, "recent events:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range x.Events {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", line(e.OccurredAt), line(e.Kind), hookOrSource(e.Evidence), line(e.RunID), line(e.Effect))
		}
		tw.Flush()
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func evidenceLine(e proto.Evidence) string {
	s := termtext.Line(e.Kind) + " from " + termtext.Line(e.Source)
	if e.HookName != "" {
		s += " " + termtext.Line(e.HookName)
	}
	return s + " (" + termtext.Line(e.Provider) + "), event " + termtext.Line(e.EventID)
}

func hookOrSource(e proto.Evidence) string {
	if e.HookName != "" {
		return termtext.Line(e.HookName)
	}
	return termtext.Line(e.Source)
}

// printActivity writes what the pane's terminal says, beside the run state,
// as rows of the explanation's table.
func printActivity(w io.Writer, a *proto.Activity) {
	if a == nil {
		return
	}
	state := termtext.Line(a.State)
	if state == "" {
		state = "unknown"
	}
	if a.Since != "" {
		state += " since " + termtext.Line(a.Since)
	}
	fmt.Fprintf(w, "  activity\t%s\n", state)
	if a.Evidence != "" {
		fmt.Fprintf(w, "  \tfrom %s\n", termtext.Clip(a.Evidence, 100))
	}
	if a.Notification != "" {
		fmt.Fprintf(w, "  \t%q\n", termtext.Clip(a.Notification, 100))
	}
	for _, r := range a.Recent {
		fmt.Fprintf(w, "  \tsaw %s at %s\n", termtext.Clip(r.Evidence, 100), termtext.Line(r.At))
	}
	for i, s := range a.Skipped {
		head := ""
		if i == 0 {
			head = "transcript"
		}
		fmt.Fprintf(w, "  %s\tskipped %s\n", head, termtext.Clip(s, 200))
	}
}

func printItems(w io.Writer, items []proto.AttentionItem) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintln(w, "attention:")
	for _, it := range items {
		fmt.Fprintf(w, "  #%d %s: %s\n", it.ID, termtext.Line(it.Reason), termtext.Clip(it.Message, 80))
	}
}

// printCost writes what the pane's process tree costs, as rows of the
// explanation's table.
func printCost(w io.Writer, c *proto.ProcessCost) {
	if c == nil {
		return
	}
	mem := "RSS " + proccost.FormatBytes(c.RSSBytes)
	if c.PSSBytes > 0 {
		mem += ", PSS " + proccost.FormatBytes(c.PSSBytes)
	}
	mem += fmt.Sprintf(" in %d processes", c.Processes)
	if c.MemoryCeiling > 0 {
		mem += ", ceiling " + proccost.FormatBytes(c.MemoryCeiling)
		if c.RSSBytes > c.MemoryCeiling {
			mem += " (over)"
		}
	}
	fmt.Fprintf(w, "  memory\t%s\n", mem)
	cpu := "not known yet (one sample so far)"
	if c.CPUPercent != nil {
		cpu = fmt.Sprintf("%.1f%% of a core", *c.CPUPercent)
	}
	fmt.Fprintf(w, "  cpu\t%s\n", cpu)
	fmt.Fprintf(w, "  \tsampled %s from %s\n", termtext.Line(c.SampledAt), termtext.Line(c.Evidence))
}

// printLimit says the run stopped at its provider's limit, as a row of
// the explanation's table.
func printLimit(w io.Writer, l *proto.Limit) {
	if l == nil {
		return
	}
	resets := "the agent did not say when it resets"
	if l.ResetsAt != "" {
		resets = "resets " + termtext.Line(l.ResetsAt)
	}
	fmt.Fprintf(w, "  limit\tstopped at its usage limit (limited); %s\n", resets)
	fmt.Fprintf(w, "  \tevidence: %s: %q\n", termtext.Line(l.Evidence), termtext.Clip(l.Message, 100))
}
