//go:build unix

package cursor

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// bigTranscript writes n turns of agent-transcripts JSONL: a wrapped user
// query, then an assistant line with text and StrReplace/Shell tool uses.
func bigTranscript(tb testing.TB, n int) string {
	tb.Helper()
	var sb strings.Builder
	cmd := strings.Repeat("go test ./... && ", 20)
	for i := range n {
		fmt.Fprintf(&sb, `{"role":"user","message":{"content":[{"type":"text","text":"<timestamp>Monday, November 30, 2026</timestamp>\n<user_query>\nPlease change function number %d so that it handles the empty input case and add a test for it.\n</user_query>"}]}}`+"\n", i)
		fmt.Fprintf(&sb, `{"role":"assistant","message":{"content":[{"type":"text","text":"I'll edit the function and run the tests."},{"type":"tool_use","name":"StrReplace","input":{"path":"/srv/app/f%d.go","old_string":"if x == nil {\n\treturn nil\n}","new_string":"if x == nil || len(x) == 0 {\n\treturn nil\n}"}},{"type":"tool_use","name":"Shell","input":{"command":"%s true","description":"Run the tests"}},{"type":"text","text":"Done: the function handles empty input and the new test passes."}]}}`+"\n", i, cmd)
	}
	path := filepath.Join(tb.TempDir(), "projects", "p", "agent-transcripts", "bench.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func benchParse(b *testing.B, opts transcript.ParseOptions) {
	path := bigTranscript(b, 20000)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	src := New()
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	runtime.GC()
	cpu := cpuTime()
	for b.Loop() {
		ts, err := src.Parse(b.Context(), transcript.Env{}, path, opts)
		if err != nil || ts[0].PromptCount != 20000 || ts[0].ToolCallCount != 40000 {
			b.Fatalf("parse: %v", err)
		}
	}
	if used := cpuTime() - cpu; used > 0 {
		b.ReportMetric(float64(fi.Size())*float64(b.N)/used.Seconds()/1e6, "MB/cpu-s")
	}
}

func BenchmarkSummaryScan(b *testing.B) { benchParse(b, transcript.ParseOptions{SummaryOnly: true}) }
func BenchmarkFullParse(b *testing.B)   { benchParse(b, transcript.ParseOptions{}) }

// cpuTime is the CPU time the process has used so far; per-CPU throughput
// stays meaningful on a loaded machine where wall-clock MB/s does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
