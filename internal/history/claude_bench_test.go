package history_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/provider/claude"
	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/transcript"
)

// claudeTree writes n small Claude Code sessions over 100 project folders.
func claudeTree(b *testing.B, n int) transcript.Env {
	b.Helper()
	home := b.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		cwd := fmt.Sprintf("/home/dev/p%d", i%100)
		ts := t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		body := fmt.Sprintf(`{"type":"user","timestamp":%q,"cwd":%q,"sessionId":%q,"uuid":"u1","message":{"role":"user","content":"fix bug %d"}}
{"type":"assistant","timestamp":%q,"cwd":%q,"sessionId":%q,"uuid":"u2","requestId":"r%d","message":{"id":"m%d","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"go test ./..."}}],"usage":{"input_tokens":10,"output_tokens":20,"cache_read_input_tokens":300}}}
{"type":"user","timestamp":%q,"cwd":%q,"sessionId":%q,"uuid":"u3","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"ok"}]}}
`, ts, cwd, id, i, ts, cwd, id, i, i, i, ts, cwd, id, i)
		p := filepath.Join(home, ".claude", "projects", fmt.Sprintf("-home-dev-p%d", i%100), id+".jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return transcript.Env{Home: home, Getenv: func(string) string { return "" }}
}

// BenchmarkClaudeDiscoveryCold and …Warm index 10,000 generated Claude Code
// sessions with the real Claude source (its own discovery and parser).
func BenchmarkClaudeDiscoveryCold(b *testing.B) {
	env := claudeTree(b, 10000)
	srcs := []transcript.Source{claude.New()}
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
		b.StartTimer()
		rs, err := history.New(st, "bench").Refresh(ctx, srcs, env, history.RefreshOptions{})
		if err != nil || rs.Parsed != 10000 {
			b.Fatalf("cold: %+v %v", rs, err)
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
}

func BenchmarkClaudeDiscoveryWarm(b *testing.B) {
	env := claudeTree(b, 10000)
	srcs := []transcript.Source{claude.New()}
	ctx := context.Background()
	st, err := store.OpenIndex(ctx, filepath.Join(b.TempDir(), "warm.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	x := history.New(st, "bench")
	if _, err := x.Refresh(ctx, srcs, env, history.RefreshOptions{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rs, err := x.Refresh(ctx, srcs, env, history.RefreshOptions{})
		if err != nil || rs.Unchanged != 10000 || rs.Parsed != 0 {
			b.Fatalf("warm: %+v %v", rs, err)
		}
	}
}
