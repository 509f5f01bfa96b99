package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/stats"
	"github.com/musterhq/muster/internal/termtext"
)

type statsOptions struct {
	JSON     bool
	By       string
	Provider string
	Search   string
	Since    string
	Now      func() time.Time
}

func newStatsCmd(f *Factory) *cobra.Command {
	return newStatsCmdWith(f, nil)
}

func newStatsCmdWith(f *Factory, runF func(*statsOptions) error) *cobra.Command {
	o := statsOptions{Now: f.now}
	cmd := &cobra.Command{
		Use:   "stats [--json] [--by day|provider|model]",
		Short: "Summarise past sessions: prompts, tools, edited files, tokens and cost",
		Long: "Count prompts, tool calls by canonical name, files edited with lines added and removed\n" +
			"(from Edit, MultiEdit, Write and ApplyPatch calls), tokens and an APPROXIMATE cost over the\n" +
			"sessions found on disk. Costs come from the provider where it records them, else from a small\n" +
			"built-in table of public list prices (standard tier, no discounts); unknown models are\n" +
			"reported as unpriced. Days are local calendar days of each session's start.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch o.By {
			case stats.ByNone, stats.ByDay, stats.ByProvider, stats.ByModel:
			default:
				return usagef("--by %q: want day, provider or model", o.By)
			}
			if o.Provider != "" && all.Source(o.Provider) == nil {
				return usagef("unknown provider %q (known: %s)", o.Provider, strings.Join(all.Names(), ", "))
			}
			if _, err := parseSince(o.Since, o.Now()); err != nil {
				return usagef("--since: %v", err)
			}
			if runF != nil {
				return runF(&o)
			}
			return runStats(cmd.Context(), f, &o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&o.By, "by", "", "group by day, provider or model")
	cmd.Flags().StringVar(&o.Provider, "provider", "", "only this provider")
	cmd.Flags().StringVar(&o.Search, "search", "", "only sessions matching TEXT (as for history)")
	cmd.Flags().StringVar(&o.Since, "since", "", "only sessions active since a duration ago (7d) or a date")
	return cmd
}

func runStats(ctx context.Context, f *Factory, o *statsOptions) error {
	since, _ := parseSince(o.Since, o.Now())
	idx, err := openHistory(ctx, f)
	if err != nil {
		return err
	}
	defer idx.Close()
	// Stats need full parses (tool calls, edits); the index keeps the
	// analysis, so only new or changed files are read in full.
	if err := refreshHistory(ctx, f, idx, historySources(o.Provider), history.RefreshOptions{Analyzer: stats.Analyzer()}); err != nil {
		return err
	}
	// Sub-agents count in their parent's conversation (stats.Compute).
	sessions, err := idx.ListAnalyzed(ctx, history.Query{Provider: o.Provider, Search: o.Search, Since: since, IncludeSubagents: true}, stats.AnalyzerVersion)
	if err != nil {
		return err
	}
	r, err := stats.Compute(sessions, o.By, time.Local)
	if err != nil {
		return usagef("%v", err)
	}
	if o.JSON {
		return writeJSON(f.IO.Out, r)
	}
	printStats(f.IO.Out, r)
	return nil
}

func fmtCost(g stats.Group) string {
	s := fmt.Sprintf("$%.2f", g.CostUSD)
	if g.CostUSD > 0 && g.CostUSD < 1 {
		s = fmt.Sprintf("$%.4f", g.CostUSD)
	}
	if len(g.UnpricedModels) > 0 {
		s += "+"
	}
	return s
}

func fmtTokens(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

func printStats(w io.Writer, r stats.Report) {
	t := r.Total
	fmt.Fprintf(w, "%d sessions · %d prompts · %d tool calls (%d failed) · %s\n", t.Sessions, t.Prompts, t.ToolCalls, t.ToolErrors,
		time.Duration(t.DurationMS*int64(time.Millisecond)).Round(time.Second))
	fmt.Fprintf(w, "%d files edited · +%d −%d lines\n", t.FilesEdited, t.LinesAdded, t.LinesRemoved)
	fmt.Fprintf(w, "tokens %s (input %s, output %s, cache read %s, cache write %s) · cost ≈ %s\n",
		fmtTokens(t.Tokens.Total), fmtTokens(t.Tokens.Input), fmtTokens(t.Tokens.Output), fmtTokens(t.Tokens.CacheRead),
		fmtTokens(t.Tokens.CacheWrite), fmtCost(t))
	if len(t.UnpricedModels) > 0 {
		fmt.Fprintf(w, "  + %s tokens of unpriced models: %s\n", fmtTokens(t.UnpricedTokens), termtext.Line(strings.Join(t.UnpricedModels, ", ")))
	}
	if r.Unanalyzed > 0 {
		fmt.Fprintf(w, "  %d session(s) could not be read in full: their tool calls are counted, not their edits\n", r.Unanalyzed)
	}
	if len(t.Tools) > 0 {
		names := slices.SortedFunc(maps.Keys(t.Tools), func(a, b string) int {
			if t.Tools[a] != t.Tools[b] {
				return t.Tools[b] - t.Tools[a]
			}
			return strings.Compare(a, b)
		})
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %d", termtext.Line(n), t.Tools[n]))
		}
		fmt.Fprintf(w, "tools: %s\n", strings.Join(parts, ", "))
	}
	if len(r.Groups) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\tSESSIONS\tPROMPTS\tTOOLS\tFILES\t+LINES\t-LINES\tTOKENS\tCOST\t\n", strings.ToUpper(r.By))
		for _, g := range r.Groups {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", termtext.Line(g.Key), g.Sessions, g.Prompts, g.ToolCalls, g.FilesEdited,
				g.LinesAdded, g.LinesRemoved, fmtTokens(g.Tokens.Total), fmtCost(g))
		}
		tw.Flush()
	}
	if len(r.Files) > 0 {
		fmt.Fprintln(w, "\nmost edited files:")
		for _, fs := range r.Files[:min(len(r.Files), 10)] {
			fmt.Fprintf(w, "  +%-5d −%-5d %s\n", fs.Added, fs.Removed, termtext.Line(fs.Path))
		}
	}
}
