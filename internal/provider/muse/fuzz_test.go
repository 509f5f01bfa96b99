package muse

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// FuzzParse runs the parser on arbitrary transcript bytes. The input is
// parsed from memory (parseFrom, what Parse runs on the opened file) and
// the home with the referenced image is made once. Writing a file and two
// temporary directories per input (file system calls are slow here) and a
// 256 KiB read buffer per parse made every execution cost milliseconds, and
// the minimizer, which runs each new input hundreds of thousands of times,
// then spent the whole fuzz time on one input (11 executions in 26 s).
func FuzzParse(f *testing.F) {
	// The seeds are the testdata transcripts cut into single records and
	// pairs of consecutive records (a call and its output): the minimizer
	// is quadratic in the size of each new input, and inputs grown from a
	// whole 4.6 KB transcript kept it busy for its full minute each. The
	// whole files are parsed by the unit tests.
	paths, _ := filepath.Glob("testdata/agents/*/sessions/*.jsonl")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		providertest.SeedRecords(f, b)
	}
	f.Add([]byte(partsItemFuzz))
	env := testEnv(f, nil)
	if err := os.WriteFile(filepath.Join(env.Home, "a.png"), []byte("\x89PNG\r\n\x1a\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	// No sessions.json beside it: snapshotModel has tests of its own.
	path := filepath.Join(f.TempDir(), "agent", "sessions", "agent.jsonl")
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		providertest.Repeatable(t, func(opts transcript.ParseOptions) []*transcript.Transcript {
			ts, err := parseFrom(ctx, env, path, bytes.NewReader(data), opts)
			if err != nil {
				t.Fatal(err)
			}
			return ts
		}, providertest.Counts)
	})
}

const partsItemFuzz = `{"type":"item","source":"runtime","item":{"type":"message_parts","role":"user","parts":[{"type":"file_ref","path":"a.png","mime_type":"image/png","bytes_len":8,"sha256":"4c4b6a3be1314ab86138bef4314dde022e600960d8689a2c8f8631802d20dab6"}]}}` + "\n"

// benchTranscript writes a transcript of about size bytes shaped like a busy
// Muse agent: prompts, thinking, tool calls with sizeable outputs.
func benchTranscript(b *testing.B, size int) string {
	b.Helper()
	var sb strings.Builder
	sb.WriteString(`{"type":"session_header","session_id":"ses_bench","agent_id":"bench","created_at":"2026-10-12T08:00:00Z"}` + "\n")
	out := strings.Repeat("lorem ipsum dolor sit amet \\\"quoted\\\" ", 60)
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, `{"type":"item","seq":%d,"source":"runtime","created_at":"2026-10-12T09:00:00Z","item":{"type":"message","role":"user","text":"please check service %d and fix what is broken"}}`+"\n", i, i)
		fmt.Fprintf(&sb, `{"type":"item","seq":%d,"source":"runtime","created_at":"2026-10-12T09:00:01Z","item":{"type":"thinking","thinking":"%s"}}`+"\n", i, out[:400])
		for j := range 3 {
			fmt.Fprintf(&sb, `{"type":"item","seq":%d,"source":"runtime","created_at":"2026-10-12T09:00:02Z","item":{"type":"function_call","call_id":"c%d_%d","name":"exec","arguments":"{\"cmd\":\"systemctl status svc-%d\"}"}}`+"\n", i, i, j, i)
			fmt.Fprintf(&sb, `{"type":"item","seq":%d,"source":"runtime","created_at":"2026-10-12T09:00:03Z","item":{"type":"function_call_output","call_id":"c%d_%d","output":"%s","success":true}}`+"\n", i, i, j, out)
		}
		fmt.Fprintf(&sb, `{"type":"item","seq":%d,"source":"runtime","created_at":"2026-10-12T09:00:04Z","item":{"type":"message","role":"assistant","text":"%s"}}`+"\n", i, out[:300])
	}
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

func benchParse(b *testing.B, opts transcript.ParseOptions) {
	providertest.BenchParse(b, New(), testEnv(b, nil), benchTranscript(b, 32<<20), opts, func(ts []*transcript.Transcript) bool {
		return len(ts) == 1 && ts[0].PromptCount > 0
	})
}

func BenchmarkSummaryScan(b *testing.B) { benchParse(b, transcript.ParseOptions{SummaryOnly: true}) }

func BenchmarkFullParse(b *testing.B) { benchParse(b, transcript.ParseOptions{}) }
