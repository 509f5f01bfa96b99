package history

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/transcript"
)

// textTree writes benchSessions sessions with replies and tool outputs of
// words drawn from a 5,000-word vocabulary (Zipf-distributed).
func textTree(b *testing.B) (*testSource, int64) {
	b.Helper()
	root := b.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 1, 4999)
	words := func(n int) string {
		var sb strings.Builder
		for range n {
			fmt.Fprintf(&sb, "w%d ", z.Uint64())
		}
		return sb.String()
	}
	for i := range benchSessions {
		var replies, outputs []string
		for range 6 {
			replies = append(replies, words(60))
			outputs = append(outputs, words(150))
		}
		writeSession(b, filepath.Join(root, fmt.Sprintf("proj-%03d", i%100), sessionName(i)+".sess"),
			testSession{ID: sessionName(i), Title: "generated " + words(4), CWD: fmt.Sprintf("/src/p%d", i%100), Prompts: 3,
				Tools: []string{"Bash", "Read", "Edit", "Bash", "Grep", "Bash"}, Replies: replies, Outputs: outputs,
				Started: t0.Add(time.Duration(i) * time.Minute)})
	}
	var size int64
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return nil
	})
	return &testSource{name: "fake", roots: []string{root}}, size
}

func coldIndex(b *testing.B, src *testSource, noText bool) (*Index, string) {
	ctx := context.Background()
	dbPath := filepath.Join(b.TempDir(), "m.db")
	st, err := store.OpenIndex(ctx, dbPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	x := New(st, "bench")
	x.noText = noText
	start := time.Now()
	if rs, err := x.Refresh(ctx, []transcript.Source{src}, transcript.Env{}, RefreshOptions{}); err != nil || rs.Parsed != benchSessions {
		b.Fatalf("cold refresh: %+v %v", rs, err)
	}
	b.Logf("cold index of %d sessions, text=%v: %v", benchSessions, !noText, time.Since(start).Round(time.Millisecond))
	st.W.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return x, dbPath
}

// BenchmarkSearch is a full-text query over 10,000 generated sessions; it
// logs cold index times with and without the text, the index size against
// the transcripts' and the p50 of queries of words of several frequencies.
func BenchmarkSearch(b *testing.B) {
	src, tsize := textTree(b)
	coldIndex(b, src, true)
	x, dbPath := coldIndex(b, src, false)
	fi, _ := os.Stat(dbPath)
	b.Logf("transcripts %.1f MB, index %.1f MB (%.2f×)", float64(tsize)/1e6, float64(fi.Size())/1e6, float64(fi.Size())/float64(tsize))
	for _, q := range []struct{ name, sql string }{
		{"full-text index", `SELECT sum(length(block)) FROM history_fts_data`},
		{"full-text text", `SELECT sum(length(c0) + length(c1) + length(c2)) FROM history_fts_content`},
		{"summaries", `SELECT sum(length(summary) + length(search)) FROM history_sessions`},
	} {
		var n int64
		if err := x.st.R.QueryRow(q.sql).Scan(&n); err != nil {
			b.Fatal(err)
		}
		b.Logf("  %s %.1f MB", q.name, float64(n)/1e6)
	}
	// Words of 4 or more characters are prefixes (w123 also finds
	// w1230…w1239); shorter ones whole words (MatchExpr).
	queries := []string{"w3", "w40 w41", "w1234", "w49", "w7 w300", "generated w12", "w123", "w100 w20", "w2 w5 w9"}
	var times, cpus []time.Duration
	ctx := context.Background()
	// A short prefix asked for explicitly expands to thousands of terms:
	// logged, not part of the p50.
	t := time.Now()
	if _, err := x.Search(ctx, SearchQuery{Text: "w3*", Limit: 50}); err != nil {
		b.Fatal(err)
	}
	b.Logf("explicit short prefix w3*: %v", time.Since(t).Round(time.Millisecond))
	i := 0
	for b.Loop() {
		t, c := time.Now(), cpuTime()
		if _, err := x.Search(ctx, SearchQuery{Text: queries[i%len(queries)], Limit: 50}); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t))
		cpus = append(cpus, cpuTime()-c)
		i++
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
	// CPU time: on a shared machine, wall time mostly measures the queue.
	slices.Sort(cpus)
	b.ReportMetric(float64(cpus[len(cpus)/2].Microseconds())/1000, "p50-cpu-ms")
}
