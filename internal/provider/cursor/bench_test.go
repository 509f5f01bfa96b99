//go:build unix

package cursor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
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
	providertest.BenchParse(b, New(), transcript.Env{}, bigTranscript(b, 20000), opts, func(ts []*transcript.Transcript) bool {
		return ts[0].PromptCount == 20000 && ts[0].ToolCallCount == 40000
	})
}

func BenchmarkSummaryScan(b *testing.B) { benchParse(b, transcript.ParseOptions{SummaryOnly: true}) }
func BenchmarkFullParse(b *testing.B)   { benchParse(b, transcript.ParseOptions{}) }
