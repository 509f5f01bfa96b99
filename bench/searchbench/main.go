// Command searchbench times full-text queries over an existing history
// index in one process (bench/history-cold.sh): the query alone, without
// the process start and index freshness check a `muster history --search`
// adds. It prints, per query, the hits and the p50 and p90 of -n runs, and
// the p50 over all queries.
//
//	searchbench -db MUSTER_HOME/state/history.db [-n 21] QUERY...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/musterhq/muster/internal/history"
)

func main() {
	db := flag.String("db", "", "the history index (history.db)")
	n := flag.Int("n", 21, "runs of each query")
	limit := flag.Int("limit", 50, "hits per query, as `muster history --search --limit`")
	flag.Parse()
	if *db == "" || flag.NArg() == 0 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: searchbench -db PATH [-n RUNS] QUERY...")
		os.Exit(2)
	}
	if _, err := os.Stat(*db); err != nil {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
	ctx := context.Background()
	x, err := history.Open(ctx, *db, "searchbench")
	if err != nil {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
	defer x.Close()
	var medians []time.Duration
	for _, q := range flag.Args() {
		var runs []time.Duration
		hits := 0
		for range *n {
			start := time.Now()
			hs, err := x.Search(ctx, history.SearchQuery{Text: q, Limit: *limit})
			runs = append(runs, time.Since(start))
			if err != nil {
				fmt.Fprintf(os.Stderr, "searchbench: %q: %v\n", q, err)
				os.Exit(1)
			}
			hits = len(hs)
		}
		slices.Sort(runs)
		p50, p90 := runs[len(runs)/2], runs[len(runs)*9/10]
		medians = append(medians, p50)
		fmt.Printf("  %-24q %3d hits  p50 %7.1f ms  p90 %7.1f ms\n", q, hits, ms(p50), ms(p90))
	}
	slices.Sort(medians)
	fmt.Printf("p50 over %d queries: %.1f ms\n", len(medians), ms(medians[len(medians)/2]))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
