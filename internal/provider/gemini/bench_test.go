//go:build unix

package gemini

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// bigLog writes a 0.61.0-shaped patch log of n turns: message lines with
// $set lastUpdated between them, and the final $set messages snapshot the
// CLI writes at exit.
func bigLog(tb testing.TB, n int) string {
	tb.Helper()
	var sb, msgs strings.Builder
	sb.WriteString(`{"sessionId":"bench-0000-4000-8000-000000000000","projectHash":"h","startTime":"2026-01-01T00:00:00.000Z","lastUpdated":"2026-01-01T00:00:00.000Z","kind":"main"}` + "\n")
	out := strings.Repeat(`ok  \tgithub.com/x/y/pkg\t0.012s\n`, 40)
	for i := range n {
		user := fmt.Sprintf(`{"id":"u%d","timestamp":"2026-01-01T00:%02d:00.000Z","type":"user","content":[{"text":"Please change function number %d so that it handles the empty input case and add a test for it."}]}`, i, i%60, i)
		gem := fmt.Sprintf(`{"id":"g%d","timestamp":"2026-01-01T00:%02d:05.000Z","type":"gemini","content":[{"text":"I'll look at the function, edit it and run the tests."}],"thoughts":[{"subject":"Planning","description":"Read, edit, test.","timestamp":"2026-01-01T00:00:01.000Z"}],"tokens":{"input":12000,"output":300,"cached":9000,"thoughts":120,"tool":0,"total":12420},"model":"gemini-2.5-pro","toolCalls":[`+
			`{"id":"replace-%d","name":"replace","args":{"file_path":"/work/x/f%d.go","old_string":"if x == nil {\n\treturn nil\n}","new_string":"if x == nil || len(x) == 0 {\n\treturn nil\n}"},"result":[{"functionResponse":{"id":"replace-%d","name":"replace","response":{"output":"Successfully modified file."}}}],"status":"success","timestamp":"2026-01-01T00:00:02.000Z","displayName":"Edit"},`+
			`{"id":"shell-%d","name":"run_shell_command","args":{"command":"go test ./...","description":"Run the tests."},"result":[{"functionResponse":{"id":"shell-%d","name":"run_shell_command","response":{"output":"%s"}}}],"status":"success","timestamp":"2026-01-01T00:00:03.000Z","displayName":"Shell"}]}`,
			i, i%60, i, i, i, i, i, out)
		fmt.Fprintf(&sb, "%s\n{\"$set\":{\"lastUpdated\":\"2026-01-01T00:00:00.000Z\"}}\n%s\n", user, gem)
		if i > 0 {
			msgs.WriteByte(',')
		}
		msgs.WriteString(user + "," + gem)
	}
	sb.WriteString(`{"$set":{"messages":[` + msgs.String() + `],"lastUpdated":"2026-01-01T01:00:00.000Z"}}` + "\n")
	path := filepath.Join(tb.TempDir(), "session-2026-01-01T00-00-bench000.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func BenchmarkSummaryScan(b *testing.B) {
	providertest.BenchParse(b, New(), transcript.Env{}, bigLog(b, 2000), transcript.ParseOptions{SummaryOnly: true}, func(ts []*transcript.Transcript) bool {
		return ts[0].PromptCount == 2000 && ts[0].ToolCallCount == 4000
	})
}

func BenchmarkFullParse(b *testing.B) {
	providertest.BenchParse(b, New(), transcript.Env{}, bigLog(b, 2000), transcript.ParseOptions{}, func([]*transcript.Transcript) bool { return true })
}
