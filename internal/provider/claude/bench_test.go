package claude

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// genTranscript writes a Claude Code 2.1.3xx-shaped transcript of about size
// bytes: per turn a typed prompt, attachments, api-request records with
// their blobs, split assistant messages with usage, tool results with
// sizeable output, and the bookkeeping records (mode, snapshots, system).
func genTranscript(tb testing.TB, dir string, size int, sessionID string) string {
	tb.Helper()
	path := filepath.Join(dir, sessionID+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	sb := &countingWriter{w: bufio.NewWriterSize(f, 1<<20)}
	filler := strings.Repeat(`lorem ipsum \"dolor\" sit amet, consectetur adipiscing elit\n`, 40)
	system := strings.Repeat(`You are an agent working with the user toward their goals. `, 60)
	env := `"userType":"external","entrypoint":"cli","cwd":"/home/dev/repo","sessionId":"` + sessionID + `","version":"2.1.328","gitBranch":"main"`
	for turn := 0; sb.Len() < size; turn++ {
		ts := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC).Add(time.Duration(turn) * time.Minute).Format(time.RFC3339Nano)
		fmt.Fprintf(sb, `{"type":"mode","mode":"normal","sessionId":"%s"}`+"\n", sessionID)
		fmt.Fprintf(sb, `{"type":"file-history-snapshot","messageId":"m%d","snapshot":{"messageId":"m%d","trackedFileBackups":{},"timestamp":"%s"},"isSnapshotUpdate":false}`+"\n", turn, turn, ts)
		fmt.Fprintf(sb, `{"parentUuid":"p%d","isSidechain":false,"promptId":"pr%d","type":"user","message":{"role":"user","content":"please fix failing test number %d in the parser package"},"uuid":"u%d","timestamp":"%s","permissionMode":"default","origin":{"kind":"human"},"promptSource":"typed",%s}`+"\n", turn, turn, turn, turn, ts, env)
		for a := range 3 {
			fmt.Fprintf(sb, `{"parentUuid":"u%d","isSidechain":false,"attachment":{"type":"skill_listing","content":"%s"},"type":"attachment","uuid":"at%d_%d","timestamp":"%s","rendered":[{"content":"<system-reminder>%s</system-reminder>"}],"renderedRole":"system",%s}`+"\n", turn, filler[:1500], turn, a, ts, filler[:1500], env)
		}
		fmt.Fprintf(sb, `{"type":"api-request","sessionId":"%s","id":"rq%d","timestamp":"%s","version":"2.1.328","querySource":"repl_main_thread","params":{"model":"claude-opus-5-5","max_tokens":128000},"keep":0,"tail":["6ce2a6872fb6479af6acb4e6b2ccc2f76d1a6c0bb3e1badbe402df93863bc2ad"]}`+"\n", sessionID, turn, ts)
		fmt.Fprintf(sb, `{"type":"api-request-blob","sessionId":"%s","hash":"h%d","message":{"role":"user","content":[{"type":"text","text":"%s"},{"type":"text","text":"%s"}]}}`+"\n", sessionID, turn, system, filler)
		for step := range 3 {
			msgID := fmt.Sprintf("msg_%d_%d", turn, step)
			usage := `"usage":{"input_tokens":12,"cache_creation_input_tokens":340,"cache_read_input_tokens":41000,"output_tokens":220,"output_tokens_details":{"thinking_tokens":40},"service_tier":"standard"}`
			fmt.Fprintf(sb, `{"parentUuid":"x","isSidechain":false,"message":{"id":"%s","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"thinking","thinking":"%s","signature":"c2lnbmF0dXJl"}],"stop_reason":"tool_use",%s},"requestId":"req_%d_%d","type":"assistant","uuid":"a%d_%d_0","timestamp":"%s",%s}`+"\n", msgID, filler[:600], usage, turn, step, turn, step, ts, env)
			fmt.Fprintf(sb, `{"parentUuid":"x","isSidechain":false,"message":{"id":"%s","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"I'll look at the test output first."}],"stop_reason":"tool_use",%s},"requestId":"req_%d_%d","type":"assistant","uuid":"a%d_%d_1","timestamp":"%s",%s}`+"\n", msgID, usage, turn, step, turn, step, ts, env)
			fmt.Fprintf(sb, `{"parentUuid":"x","isSidechain":false,"message":{"id":"%s","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"tool_use","id":"toolu_%d_%d","name":"Bash","input":{"command":"go test ./internal/parser/... -run TestCase%d","description":"Run the failing test"}}],"stop_reason":"tool_use",%s},"requestId":"req_%d_%d","type":"assistant","uuid":"a%d_%d_2","timestamp":"%s",%s}`+"\n", msgID, turn, step, turn, usage, turn, step, turn, step, ts, env)
			fmt.Fprintf(sb, `{"parentUuid":"x","isSidechain":false,"promptId":"pr%d","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%d_%d","type":"tool_result","content":"%s","is_error":false}]},"uuid":"r%d_%d","timestamp":"%s","toolUseResult":{"stdout":"%s","stderr":"","interrupted":false},%s}`+"\n", turn, turn, step, filler, turn, step, ts, filler, env)
		}
		fmt.Fprintf(sb, `{"parentUuid":"x","isSidechain":false,"type":"system","subtype":"turn_duration","durationMs":1067,"messageCount":17,"timestamp":"%s","uuid":"s%d","isMeta":false,%s}`+"\n", ts, turn, env)
		fmt.Fprintf(sb, `{"type":"last-prompt","lastPrompt":"please fix","leafUuid":"l%d","sessionId":"%s"}`+"\n", turn, sessionID)
	}
	if err := errors.Join(sb.w.Flush(), f.Close()); err != nil {
		tb.Fatal(err)
	}
	return path
}

type countingWriter struct {
	w *bufio.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return c.w.Write(p)
}

func (c *countingWriter) Len() int { return c.n }

func benchParse(b *testing.B, opts transcript.ParseOptions) {
	path := genTranscript(b, b.TempDir(), 64<<20, "11111111-2222-4333-8444-555555555555")
	providertest.BenchParse(b, New(), transcript.Env{Home: b.TempDir()}, path, opts, func(ts []*transcript.Transcript) bool {
		return len(ts) == 1 && ts[0].PromptCount > 0 && ts[0].Usage != nil
	})
}

func BenchmarkSummaryScan(b *testing.B) { benchParse(b, transcript.ParseOptions{SummaryOnly: true}) }

func BenchmarkFullParse(b *testing.B) { benchParse(b, transcript.ParseOptions{}) }
