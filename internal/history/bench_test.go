package history

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/transcript"
)

const benchSessions = 10000

// benchTree writes benchSessions small session files over 100 project
// directories, the shape of a Claude projects tree.
func benchTree(b *testing.B) *testSource {
	b.Helper()
	root := b.TempDir()
	for i := range benchSessions {
		writeSession(b, filepath.Join(root, fmt.Sprintf("proj-%03d", i%100), sessionName(i)+".sess"),
			testSession{ID: sessionName(i), Title: "generated session", CWD: "/src/p", Prompts: 3, Tools: []string{"Bash"}, Started: t0.Add(time.Duration(i) * time.Minute)})
	}
	return &testSource{name: "fake", roots: []string{root}}
}

// BenchmarkDiscoveryCold indexes 10,000 sessions into an empty index.
func BenchmarkDiscoveryCold(b *testing.B) {
	src := benchTree(b)
	ctx := context.Background()
	dir := b.TempDir()
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		st, err := store.OpenIndex(ctx, filepath.Join(dir, fmt.Sprintf("cold-%d.db", n)))
		if err != nil {
			b.Fatal(err)
		}
		x := New(st, "bench")
		b.StartTimer()
		rs, err := x.Refresh(ctx, []transcript.Source{src}, transcript.Env{}, RefreshOptions{})
		if err != nil || rs.Parsed != benchSessions {
			b.Fatalf("cold refresh: %+v %v", rs, err)
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(benchSessions), "sessions")
}

// BenchmarkDiscoveryWarm re-discovers 10,000 unchanged sessions: a listing,
// one indexed query and no parse (target ≤ 200 ms).
func BenchmarkDiscoveryWarm(b *testing.B) {
	src := benchTree(b)
	ctx := context.Background()
	st, err := store.OpenIndex(ctx, filepath.Join(b.TempDir(), "warm.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	x := New(st, "bench")
	if _, err := x.Refresh(ctx, []transcript.Source{src}, transcript.Env{}, RefreshOptions{}); err != nil {
		b.Fatal(err)
	}
	before := src.parses.Load()
	var listing, refresh time.Duration
	n := 0
	for b.Loop() {
		// Alternate the bare listing (the sources' own cost) with the
		// refresh, so machine load hits both.
		start := time.Now()
		if _, err := src.Discover(ctx, transcript.Env{}); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		rs, err := x.Refresh(ctx, []transcript.Source{src}, transcript.Env{}, RefreshOptions{})
		if err != nil || rs.Unchanged != benchSessions {
			b.Fatalf("warm refresh: %+v %v", rs, err)
		}
		listing += mid.Sub(start)
		refresh += time.Since(mid)
		n++
	}
	if src.parses.Load() != before {
		b.Fatalf("warm refresh parsed %d files", src.parses.Load()-before)
	}
	b.ReportMetric(float64(refresh.Milliseconds())/float64(n), "refresh-ms")
	b.ReportMetric(float64(listing.Milliseconds())/float64(n), "listing-ms")
	b.ReportMetric(float64(benchSessions), "sessions")
}
