package codex

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// FuzzParse runs the parser on arbitrary rollout bytes. The JSONL seeds are
// the testdata rollouts cut into records and pairs of consecutive records,
// and the files and home are made once: whole 12 KB rollouts as seeds and
// two temporary directories per input kept the minimizer, which is
// quadratic in the input's size, busy for its full minute on each new input
// (under 5,000 executions a minute).
func FuzzParse(f *testing.F) {
	filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		switch {
		case strings.HasSuffix(p, ".jsonl"):
			providertest.SeedRecords(f, b, false)
		case strings.HasSuffix(p, ".json"):
			f.Add(b, true)
		}
		return nil
	})
	dir := f.TempDir()
	env := transcript.Env{Home: f.TempDir()}
	f.Fuzz(func(t *testing.T, data []byte, document bool) {
		path := filepath.Join(dir, "rollout-x.jsonl")
		if document {
			path = filepath.Join(dir, "rollout-x.json")
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		providertest.Repeatable(t, func(opts transcript.ParseOptions) []*transcript.Transcript {
			ts, err := New().Parse(context.Background(), env, path, opts)
			if err != nil {
				t.Fatal(err)
			}
			return ts
		}, func(full, sum *transcript.Transcript) string {
			if !cmp.Equal(full.Usage, sum.Usage) {
				return "Usage"
			}
			return providertest.Counts(full, sum)
		})
		ReadSessionMeta(path) // must not panic
	})
}

// genRollout writes a 0.169-shaped rollout of about size bytes: per turn a
// prompt (response item + item_completed), turn_context, reasoning, tool
// calls with sizeable output, token records and world_state.
func genRollout(tb testing.TB, dir string, size int) string {
	tb.Helper()
	path := filepath.Join(dir, "rollout-2026-11-30T10-00-00-01a20000-0000-7000-8000-000000000000.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n := 0
	pr := func(format string, args ...any) {
		c, _ := fmt.Fprintf(w, format+"\n", args...)
		n += c
	}
	out := strings.Repeat(`ok  \tgithub.com/acme/store/internal/pkg\t0.412s\n`, 60)
	base := strings.Repeat("You are Codex, an agent based on GPT-6. ", 500)
	pr(`{"timestamp":"2026-11-30T10:00:00.000Z","ordinal":0,"type":"session_meta","payload":{"id":"01a20000-0000-7000-8000-000000000000","timestamp":"2026-11-30T10:00:00.000Z","cwd":"/home/dev/store","originator":"codex-tui","cli_version":"0.169.0","source":"cli","base_instructions":{"text":"%s"}}}`, base)
	for turn := 0; n < size; turn++ {
		ts := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC).Add(time.Duration(turn) * time.Second).Format(time.RFC3339Nano)
		pr(`{"timestamp":"%s","ordinal":1,"type":"world_state","payload":{"full":true,"state":{"environments":{"local":{"cwd":"/home/dev/store","filesystem":"%s"}}}}}`, ts, base[:2000])
		pr(`{"timestamp":"%s","ordinal":2,"type":"turn_context","payload":{"turn_id":"t%d","cwd":"/home/dev/store","model":"gpt-6.1","effort":"medium"}}`, ts, turn)
		pr(`{"timestamp":"%s","ordinal":3,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix failing test %d"}],"internal_chat_message_metadata_passthrough":{"content_item_metadata":[{"provenance":{"type":"user"}}]}}}`, ts, turn)
		pr(`{"timestamp":"%s","ordinal":4,"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"fix failing test %d"}]}}}`, ts, turn)
		pr(`{"timestamp":"%s","ordinal":5,"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Planning** run the tests first"}],"encrypted_content":"%s"}}`, ts, strings.Repeat("gAAAAB", 300))
		for c := range 3 {
			pr(`{"timestamp":"%s","ordinal":6,"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"go test ./... -run Test%d\"}","call_id":"call_%d_%d"}}`, ts, turn, turn, c)
			pr(`{"timestamp":"%s","ordinal":7,"type":"response_item","payload":{"type":"function_call_output","call_id":"call_%d_%d","output":"Process exited with code 0\nOutput:\n%s"}}`, ts, turn, c, out)
			pr(`{"timestamp":"%s","ordinal":8,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":10,"total_tokens":1},"last_token_usage":{"input_tokens":1000,"cached_input_tokens":500,"output_tokens":50},"model_context_window":258400},"rate_limits":null}}`, ts, (turn*3+c+1)*1000, (turn*3+c+1)*500, (turn*3+c+1)*50)
		}
		pr(`{"timestamp":"%s","ordinal":9,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixed test %d."}]}}`, ts, turn)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		tb.Fatal(err)
	}
	return path
}

func benchParse(b *testing.B, opts transcript.ParseOptions) {
	path := genRollout(b, b.TempDir(), 64<<20)
	providertest.BenchParse(b, New(), transcript.Env{Home: b.TempDir()}, path, opts, func(ts []*transcript.Transcript) bool {
		return len(ts) == 1 && ts[0].PromptCount > 0 && ts[0].Usage != nil
	})
}

func BenchmarkSummaryScan(b *testing.B) { benchParse(b, transcript.ParseOptions{SummaryOnly: true}) }

func BenchmarkFullParse(b *testing.B) { benchParse(b, transcript.ParseOptions{}) }

// FuzzScreen reads arbitrary screens as dialogs and limits: a pane's
// screen is whatever its programs print. The seeds are the recorded
// screens, cut down to what is read of them (SeedScreens).
func FuzzScreen(f *testing.F) {
	env := transcript.Env{Home: f.TempDir()}
	providertest.SeedScreens(f, Provider{}, env, "testdata/dialog", "testdata/limit")
	f.Fuzz(func(t *testing.T, screen string) {
		providertest.FuzzScreen(t, Provider{}, env, screen)
	})
}

// FuzzFollow follows arbitrary rollout bytes appended in arbitrary
// pieces: after each, the follow says what a whole parse says (Codex
// decides late which records to keep, so a cut anywhere must not change
// that).
func FuzzFollow(f *testing.F) {
	filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			b, _ := os.ReadFile(p)
			providertest.SeedRecords(f, b, []byte{100, 3})
		}
		return nil
	})
	f.Add([]byte(rolloutTurn(1)+rolloutTurn(2)), []byte{40, 90, 7})
	path := filepath.Join(f.TempDir(), "rollout-2026-03-01T10-00-00-bbbbbbbb-0000-4000-8000-00000000000b.jsonl")
	env := transcript.Env{Home: f.TempDir()}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		providertest.FuzzFollow(t, New(), env, path, data, cuts)
	})
}
