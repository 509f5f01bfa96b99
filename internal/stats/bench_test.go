package stats

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/transcript"
)

// benchClaudeTree writes n Claude Code sessions of turns turns each in the
// shape bench/history.sh generates (a prompt; one response split over two
// lines sharing its message id, with a thinking block and an Edit call; the
// tool result; a reply), over 50 project folders, and returns the
// environment that finds them.
func benchClaudeTree(b *testing.B, n, turns int) transcript.Env {
	b.Helper()
	dir := b.TempDir()
	models := []string{"claude-sonnet-4-20250514", "claude-opus-4-1-20250805", "claude-3-5-haiku-20241022"}
	seed := uint64(42)
	rnd := func(k int) int64 {
		seed = (seed*1103515245 + 12345) % 2147483648
		return int64(seed % uint64(k))
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for s := range n {
		cwd := fmt.Sprintf("/home/dev/project-%d", s%50)
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", s, s)
		ts := t0.Add(time.Duration(s) * time.Hour)
		u := 0
		var buf strings.Builder
		enc := json.NewEncoder(&buf)
		line := func(kind string, extra map[string]any) {
			ts = ts.Add(time.Second)
			l := map[string]any{"parentUuid": nil, "isSidechain": false, "userType": "external", "cwd": cwd, "sessionId": id,
				"version": "2.0.0", "uuid": fmt.Sprintf("%s-%d", id, u), "timestamp": ts.Format("2006-01-02T15:04:05.000Z"), "type": kind}
			u++
			for k, v := range extra {
				l[k] = v
			}
			if err := enc.Encode(l); err != nil {
				b.Fatal(err)
			}
		}
		for t := range turns {
			model := models[rnd(len(models))]
			line("user", map[string]any{"message": map[string]any{"role": "user",
				"content": fmt.Sprintf("Please change step %d of the build so that the tests pass (session %d).", t, s)}})
			usage := map[string]int64{"input_tokens": 10 + rnd(500), "output_tokens": 50 + rnd(2000),
				"cache_creation_input_tokens": rnd(4000), "cache_read_input_tokens": rnd(90000)}
			mid, rid := fmt.Sprintf("msg_%06x_%d", s, t), fmt.Sprintf("req_%06x_%d", s, t)
			tid := fmt.Sprintf("toolu_%06x_%d", s, t)
			msg := func(content any, id string, usage any) map[string]any {
				return map[string]any{"id": id, "type": "message", "role": "assistant", "model": model, "content": content, "usage": usage}
			}
			line("assistant", map[string]any{"requestId": rid, "message": msg([]any{map[string]any{"type": "thinking",
				"thinking": "Look at the build file first.", "signature": "sig"}}, mid, usage)})
			line("assistant", map[string]any{"requestId": rid, "message": msg([]any{map[string]any{"type": "tool_use", "id": tid,
				"name": "Edit", "input": map[string]any{"file_path": fmt.Sprintf("%s/build/step%d.go", cwd, t),
					"old_string": "a := 1\nb := 2", "new_string": "a := 1\nb := 3\nc := 4"}}}, mid, usage)})
			line("user", map[string]any{"message": map[string]any{"role": "user", "content": []any{map[string]any{
				"type": "tool_result", "tool_use_id": tid, "content": "The file has been updated."}}}})
			usage2 := map[string]int64{"input_tokens": 5 + rnd(50), "output_tokens": 20 + rnd(300),
				"cache_creation_input_tokens": 0, "cache_read_input_tokens": rnd(90000)}
			line("assistant", map[string]any{"requestId": rid + "b", "message": msg([]any{map[string]any{"type": "text",
				"text": fmt.Sprintf("Step %d is done; the tests pass now.", t)}}, mid+"b", usage2)})
		}
		p := filepath.Join(dir, "claude", "projects", fmt.Sprintf("-home-dev-project-%d", s%50), id+".jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(buf.String()), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return transcript.Env{Home: filepath.Join(dir, "home"), Getenv: func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return filepath.Join(dir, "claude")
		}
		return ""
	}}
}

// BenchmarkWarmStats measures the three parts of a warm `muster stats --by
// day` on bench/history.sh's default data (1,000 sessions × 40 turns): the
// refresh that finds nothing changed, the listing of every session's brief,
// and the report. Each is timed apart, in turn, so that machine load falls
// on all alike; the process's start is not included (see
// bench/history.sh for the whole command against ccusage). Each part's
// CPU time is the process's, garbage collection included.
func BenchmarkWarmStats(b *testing.B) {
	env := benchClaudeTree(b, 1000, 40)
	ctx := b.Context()
	idx, err := history.Open(ctx, filepath.Join(b.TempDir(), "muster.db"), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	srcs := []transcript.Source{all.Source("claude")}
	opts := history.RefreshOptions{Analyzer: Analyzer()}
	if _, err := idx.Refresh(ctx, srcs, env, opts); err != nil {
		b.Fatal(err)
	}
	q := history.Query{Provider: "claude", IncludeSubagents: true, IncludeEmpty: true}
	var refresh, list, compute, cpuRefresh, cpuList, cpuCompute time.Duration
	for b.Loop() {
		start, c0 := time.Now(), cpuTime()
		st, err := idx.Refresh(ctx, srcs, env, opts)
		if err != nil || st.Parsed != 0 {
			b.Fatalf("warm refresh: %+v %v", st, err)
		}
		t1, c1 := time.Now(), cpuTime()
		sessions, err := idx.ListAnalyzed(ctx, q, AnalyzerVersion)
		if err != nil {
			b.Fatal(err)
		}
		t2, c2 := time.Now(), cpuTime()
		r, err := ComputeWith(ctx, sessions, Options{By: ByDay, Loc: time.FixedZone("IST", 5*3600+1800)})
		if err != nil || r.Total.Sessions != 1000 {
			b.Fatalf("compute: %d sessions, %v", r.Total.Sessions, err)
		}
		refresh += t1.Sub(start)
		list += t2.Sub(t1)
		compute += time.Since(t2)
		cpuRefresh += c1 - c0
		cpuList += c2 - c1
		cpuCompute += cpuTime() - c2
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
	b.ReportMetric(ms(refresh), "refresh-ms")
	b.ReportMetric(ms(list), "list-ms")
	b.ReportMetric(ms(compute), "compute-ms")
	b.ReportMetric(ms(cpuRefresh), "refresh-cpu-ms")
	b.ReportMetric(ms(cpuList), "list-cpu-ms")
	b.ReportMetric(ms(cpuCompute), "compute-cpu-ms")
}
