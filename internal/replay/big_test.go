package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/testing/chromium"
	"github.com/musterhq/muster/internal/transcript"
)

// writeBigClaude writes a Claude Code transcript of about size bytes:
// prompts, markdown replies with code, Bash calls with long outputs.
func writeBigClaude(t *testing.T, path string, size int64) int {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	line := func(v any) {
		b, _ := json.Marshal(v)
		w.Write(b)
		w.WriteByte('\n')
	}
	output := strings.Repeat("ok  github.com/example/pkg/module/subpackage/with/a/long/path  0.123s  coverage: 81.2% of statements\n", 220)
	reply := "## Result\n\nThe tests **pass**. Here is the change:\n\n```go\nfunc Add(a, b int) int {\n\treturn a + b\n}\n```\n\n- one\n- two\n"
	var written int64
	n := 0
	for ; written < size; n++ {
		ts := t0.Add(time.Duration(n) * time.Minute).Format(time.RFC3339)
		id := fmt.Sprintf("toolu_%06d", n)
		recs := []any{
			map[string]any{"type": "user", "sessionId": "big", "uuid": fmt.Sprintf("u%d", n), "timestamp": ts, "cwd": "/src/app",
				"message": map[string]any{"role": "user", "content": fmt.Sprintf("Run the tests again, round %d", n)}},
			map[string]any{"type": "assistant", "sessionId": "big", "uuid": fmt.Sprintf("a%d", n), "timestamp": ts, "requestId": fmt.Sprintf("r%d", n),
				"message": map[string]any{"id": fmt.Sprintf("m%d", n), "role": "assistant", "model": "claude-sonnet-4-5",
					"content": []any{map[string]any{"type": "text", "text": reply}, map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": "go test ./..."}}},
					"usage":   map[string]any{"input_tokens": 100, "output_tokens": 50}}},
			map[string]any{"type": "user", "sessionId": "big", "uuid": fmt.Sprintf("t%d", n), "timestamp": ts,
				"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": output}}}},
		}
		for _, r := range recs {
			line(r)
		}
		written += int64(len(output) + len(reply) + 900)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return n
}

// TestBigReplay measures a 100 MB transcript (MUSTER_BIG_REPLAY=1): parse
// time, the size of the first served page and of the one-file replay, and
// the time headless Chromium takes to load and paint each (a screenshot,
// less the time it takes for an empty page). Figures are logged; the
// served page must stay within its budget.
func TestBigReplay(t *testing.T) {
	if os.Getenv("MUSTER_BIG_REPLAY") != "1" {
		t.Skip("set MUSTER_BIG_REPLAY=1 to measure a 100 MB replay")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	prompts := writeBigClaude(t, path, 100<<20)
	fi, _ := os.Stat(path)
	start := time.Now()
	ts, err := all.Source("claude").Parse(context.Background(), transcript.Env{Home: dir}, path, transcript.ParseOptions{})
	if err != nil || len(ts) != 1 {
		t.Fatalf("parse: %v", err)
	}
	parse := time.Since(start)
	start = time.Now()
	paged, err := HTML(ts[0], Options{PageURL: func(n int) string { return fmt.Sprint("?page=", n) }, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	renderPaged := time.Since(start)
	start = time.Now()
	whole, err := HTML(ts[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	renderWhole := time.Since(start)
	t.Logf("transcript: %.1f MB, %d prompts; parse %v", float64(fi.Size())/1e6, prompts, parse.Round(time.Millisecond))
	t.Logf("served page 1: %.2f MB, rendered in %v", float64(len(paged))/1e6, renderPaged.Round(time.Millisecond))
	t.Logf("one-file replay: %.1f MB, rendered in %v", float64(len(whole))/1e6, renderWhole.Round(time.Millisecond))
	if len(paged) > DefaultPageBytes*3/2 {
		t.Errorf("the served page is %d bytes, over its budget of %d by more than half", len(paged), DefaultPageBytes)
	}

	bin := chromium.Find(t)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return "file://" + p
	}
	paint := func(url string) time.Duration {
		start := time.Now()
		chromium.Screenshot(t, bin, url, filepath.Join(t.ArtifactDir(), fmt.Sprintf("shot-%d.png", time.Now().UnixNano())), 1280, 900)
		return time.Since(start)
	}
	empty := paint(write("empty.html", []byte("<!DOCTYPE html><title>x</title><p>x")))
	pagedT := paint(write("paged.html", paged))
	wholeT := paint(write("whole.html", whole))
	t.Logf("chromium load+paint (less %v for an empty page): served page 1 %v, one-file replay %v",
		empty.Round(time.Millisecond), (pagedT - empty).Round(time.Millisecond), (wholeT - empty).Round(time.Millisecond))
}
