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
	Until    string
	Prices   bool
	Now      func() time.Time
}

func newStatsCmd(f *Factory) *cobra.Command {
	return newStatsCmdWith(f, nil)
}

func newStatsCmdWith(f *Factory, runF func(*statsOptions) error) *cobra.Command {
	o := statsOptions{Now: f.now}
	cmd := &cobra.Command{
		Use:   "stats [--json] [--by day|week|month|session|block|project|provider|model] [--since WHEN] [--until WHEN] | stats --prices [--json]",
		Short: "Summarise past sessions: prompts, tools, edited files, tokens and cost",
		Long: "Count prompts, tool calls by canonical name, files edited with lines added and removed\n" +
			"(from Edit, MultiEdit, Write and ApplyPatch calls), tokens and an APPROXIMATE cost over the\n" +
			"sessions found on disk. Costs come from the provider where it records them, else from a small\n" +
			"built-in table of public list prices (standard tier, no discounts; --prices prints it with\n" +
			"where and when it was read); models it does not list are reported as unpriced, with\n" +
			"their tokens, never guessed.\n\n" +
			"Tokens are counted per model response and dated by it: a response several files repeat (a\n" +
			"resumed or forked conversation) counts once, as in ccusage. --by day, week (from Sunday) and\n" +
			"month group tokens by local calendar date of each response and activity by each session's\n" +
			"start; session groups by conversation, project by directory; block shows 5-hour billing\n" +
			"blocks, with the active block's burn rate and projection. --since and --until (a date, whole\n" +
			"days; or a duration ago) bound both the sessions and the responses counted.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Prices {
				for _, name := range []string{"by", "provider", "search", "since", "until"} {
					if cmd.Flags().Changed(name) {
						return usagef("--prices takes no --%s: it prints the price table", name)
					}
				}
				if runF != nil {
					return runF(&o)
				}
				return printPrices(f, o.JSON)
			}
			if o.By != stats.ByNone && !slices.Contains(stats.Groupings, o.By) {
				return usagef("--by %q: want %s", o.By, strings.Join(stats.Groupings, ", "))
			}
			if o.Provider != "" && all.Source(o.Provider) == nil {
				return usagef("unknown provider %q (known: %s)", o.Provider, strings.Join(all.Names(), ", "))
			}
			since, err := parseSince(o.Since, o.Now())
			if err != nil {
				return usagef("--since: %v", err)
			}
			until, err := parseUntil(o.Until, o.Now())
			if err != nil {
				return usagef("--until: %v", err)
			}
			if !since.IsZero() && !until.IsZero() && !until.After(since) {
				return usagef("--until %s is not after --since %s", o.Until, o.Since)
			}
			if runF != nil {
				return runF(&o)
			}
			return runStats(cmd.Context(), f, &o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&o.By, "by", "", "group by "+strings.Join(stats.Groupings, ", "))
	cmd.Flags().StringVar(&o.Provider, "provider", "", "only this provider")
	cmd.Flags().StringVar(&o.Search, "search", "", "only sessions matching TEXT (as for history)")
	cmd.Flags().StringVar(&o.Since, "since", "", "only usage since a duration ago (7d) or a date")
	cmd.Flags().StringVar(&o.Until, "until", "", "only usage before a duration ago, or up to a date (included)")
	cmd.Flags().BoolVar(&o.Prices, "prices", false, "print the built-in price table (USD per million tokens), its date and source")
	return cmd
}

// printPrices prints the price table costs are computed from.
func printPrices(f *Factory, asJSON bool) error {
	table := stats.Prices()
	if asJSON {
		return writeJSON(f.IO.Out, struct {
			stats.PriceTableInfo
			Models map[string]stats.Price `json:"models"`
		}{stats.PriceTableInfo{AsOf: stats.PricesAsOf, Source: stats.PricesSource}, table})
	}
	w := f.IO.Out
	fmt.Fprintf(w, "prices as of %s: %s\n\n", stats.PricesAsOf, stats.PricesSource)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "MODEL\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\n")
	for _, m := range slices.Sorted(maps.Keys(table)) {
		p := table[m]
		fmt.Fprintf(tw, "%s\t%g\t%g\t%g\t%g\n", m, p.Input, p.Output, p.CacheRead, p.CacheWrite)
	}
	return tw.Flush()
}

func runStats(ctx context.Context, f *Factory, o *statsOptions) error {
	since, _ := parseSince(o.Since, o.Now())
	until, _ := parseUntil(o.Until, o.Now())
	idx, err := openHistory(ctx, f)
	if err != nil {
		return err
	}
	defer idx.Close()
	// Sub-agents count in their parent's conversation (stats.Compute), and
	// a file of responses without a prompt (which history does not list)
	// still used tokens.
	q := history.Query{Provider: o.Provider, Search: o.Search, Since: since, Until: until, IncludeSubagents: true, IncludeEmpty: true}
	// The sessions are listed while the refresh runs, on another core: a
	// warm refresh finds every file as indexed and writes nothing, and the
	// listing stands (10 ms off a warm run's 120); when the refresh wrote,
	// they are listed again.
	changes := idx.Changes()
	type listing struct {
		sessions []history.Analyzed
		err      error
	}
	listed := make(chan listing, 1)
	go func() {
		sessions, err := idx.ListAnalyzed(ctx, q, stats.AnalyzerVersion)
		listed <- listing{sessions, err}
	}()
	// Stats need full parses (tool calls, edits); the index keeps the
	// analysis, so only new or changed files are read in full.
	err = refreshHistory(ctx, f, idx, historySources(o.Provider), history.RefreshOptions{Analyzer: stats.Analyzer()})
	l := <-listed // before returning: the listing uses the index
	if err != nil {
		return err
	}
	sessions, err := l.sessions, l.err
	if err != nil || idx.Changes() != changes {
		sessions, err = idx.ListAnalyzed(ctx, q, stats.AnalyzerVersion)
	}
	if err != nil {
		return err
	}
	r, err := stats.ComputeWith(ctx, sessions, stats.Options{By: o.By, Loc: o.Now().Location(), Since: since, Until: until, Now: o.Now()})
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(f.IO.Out, r)
	}
	printStats(f.IO.Out, r, o.Now().Location())
	return nil
}

// fmtCost prints a cost; "+" says some usage is unpriced, and a cost
// made only of unpriced usage is "unknown", never $0.
func fmtCost(g stats.Group) string {
	return fmtUSD(g.CostUSD, g.UnpricedTokens)
}

func fmtUSD(usd float64, unpriced int64) string { return stats.FormatUSD(usd, unpriced) }

// printBlocks prints the 5-hour blocks, times in loc, and the active
// block's burn rate and projection.
func printBlocks(w io.Writer, bs []stats.Block, loc *time.Location) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "BLOCK START\tLAST ACTIVITY\tRESPONSES\tTOKENS\tCOST\tMODELS\n")
	for _, b := range bs {
		start := b.Start.In(loc).Format("2006-01-02 15:04")
		if b.Active {
			start += " (active)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", start, b.LastActivity.In(loc).Format("15:04"), b.Responses,
			fmtTokens(b.Tokens.Total), fmtUSD(b.CostUSD, b.UnpricedTokens), termtext.Line(strings.Join(b.Models, ", ")))
	}
	tw.Flush()
	for _, b := range bs {
		if b.BurnRate == nil || b.Projection == nil {
			continue
		}
		fmt.Fprintf(w, "active block: %s tokens/min, %s/hour; by %s (%dm left): %s tokens, %s\n",
			fmtTokens(int64(b.BurnRate.TokensPerMinute)), fmtUSD(b.BurnRate.CostPerHour, 0), b.End.In(loc).Format("15:04"),
			b.Projection.RemainingMinutes, fmtTokens(b.Projection.Tokens), fmtUSD(b.Projection.CostUSD, b.UnpricedTokens))
	}
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

func printStats(w io.Writer, r stats.Report, loc *time.Location) {
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
	if r.Duplicates > 0 {
		fmt.Fprintf(w, "  %d response(s) repeated by resumed or forked conversations counted once\n", r.Duplicates)
	}
	if len(r.Groups) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		extra := ""
		if r.By == stats.BySession {
			extra = "\tPROJECT"
		}
		fmt.Fprintf(tw, "%s\tSESSIONS\tPROMPTS\tTOOLS\tFILES\t+LINES\t-LINES\tINPUT\tOUTPUT\tCACHE R\tCACHE W\tTOKENS\tCOST%s\t\n", strings.ToUpper(r.By), extra)
		for _, g := range r.Groups {
			extra := ""
			if r.By == stats.BySession {
				extra = "\t" + termtext.Line(g.Project)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s%s\t\n", termtext.Line(g.Key), g.Sessions, g.Prompts, g.ToolCalls, g.FilesEdited,
				g.LinesAdded, g.LinesRemoved, fmtTokens(g.Tokens.Input), fmtTokens(g.Tokens.Output), fmtTokens(g.Tokens.CacheRead),
				fmtTokens(g.Tokens.CacheWrite), fmtTokens(g.Tokens.Total), fmtCost(g), extra)
		}
		tw.Flush()
	}
	if len(r.Blocks) > 0 {
		printBlocks(w, r.Blocks, loc)
	}
	if len(r.Files) > 0 {
		fmt.Fprintln(w, "\nmost edited files:")
		for _, fs := range r.Files[:min(len(r.Files), 10)] {
			fmt.Fprintf(w, "  +%-5d −%-5d %s\n", fs.Added, fs.Removed, termtext.Line(fs.Path))
		}
	}
}
