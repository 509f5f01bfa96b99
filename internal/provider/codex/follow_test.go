package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// followRoots are the trees of recorded rollouts the follow is checked
// on: the package's own (forks, routes, turns, a home) and the
// repository's shared fixtures and real-CLI captures.
var followRoots = []string{
	"testdata",
	filepath.Join(providertest.Shared, "fixtures", "codex"),
	filepath.Join(providertest.Shared, "research", "real-cli", "codex"),
}

// TestFollowMatchesParse: following a rollout as it grows in random
// pieces gives, after each piece, what a whole parse of the same bytes
// gives, items and usage log included, for every recorded rollout.
func TestFollowMatchesParse(t *testing.T) {
	n := 0
	for _, root := range followRoots {
		var files []string
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && !strings.HasSuffix(p, "history.jsonl") {
				files = append(files, p)
			}
			return nil
		})
		for _, file := range files {
			rel, _ := filepath.Rel(root, file)
			t.Run(filepath.Base(root)+"/"+rel, func(t *testing.T) {
				// The whole tree, so that a fork finds its original.
				tmp := t.TempDir()
				providertest.CopyTree(t, root, tmp)
				providertest.GrowLines(t, New(), transcript.Env{Home: t.TempDir()}, filepath.Join(tmp, rel), 4)
			})
			n++
		}
	}
	if n < 20 {
		t.Fatalf("followed only %d recorded rollouts", n)
	}
}

// rolloutTurn is one prompt, a tool call with its output and a reply, as
// Codex appends them: each reply twice, as a response item and as an
// event, the way the decision between them is made late.
func rolloutTurn(n int) string {
	ts := fmt.Sprintf("2026-03-01T10:%02d:%02d.000Z", n/60%60, n%60)
	out := strings.Repeat("ok  example.com/pkg 0.01s\\n", 40)
	return fmt.Sprintf(`{"timestamp":%[1]q,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"prompt %[2]d"}]}}
{"timestamp":%[1]q,"type":"event_msg","payload":{"type":"user_message","message":"prompt %[2]d"}}
{"timestamp":%[1]q,"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"go\",\"test\"]}","call_id":"c%[2]d"}}
{"timestamp":%[1]q,"type":"response_item","payload":{"type":"function_call_output","call_id":"c%[2]d","output":"%[3]s"}}
{"timestamp":%[1]q,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"reply %[2]d"}]}}
{"timestamp":%[1]q,"type":"event_msg","payload":{"type":"agent_message","message":"reply %[2]d"}}
{"timestamp":%[1]q,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%[4]d,"output_tokens":%[2]d}}}}
`, ts, n, out, 100*n)
}

// TestFollowReadsOnlyAppends: once a rollout is followed, each append
// costs reading what was appended, not the file (issue 22: every append
// re-read the whole rollout, ~50 % of a core at 200 MB), and what it says
// is what a whole parse says.
func TestFollowReadsOnlyAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rollout-2026-03-01T10-00-00-bbbbbbbb-0000-4000-8000-00000000000b.jsonl")
	head := `{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"bbbbbbbb-0000-4000-8000-00000000000b","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/src/app","originator":"codex_cli_rs","source":"cli"}}` + "\n"
	var b strings.Builder
	b.WriteString(head)
	for n := 1; n <= 300; n++ {
		b.WriteString(rolloutTurn(n))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	w := providertest.Follow(t, New(), transcript.Env{Home: t.TempDir()}, path)
	w.Step(t)
	for n := 301; n <= 310; n++ {
		more := rolloutTurn(n)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(more)
		f.Close()
		before := w.Read
		got := w.Step(t)
		// The read ends at end of file: a read that returns nothing.
		if read := w.Read - before; read > int64(len(more)) {
			t.Fatalf("append %d of %d bytes: read %d bytes", n, len(more), read)
		}
		w.SameAsParse(t, fmt.Sprintf("append %d", n), got)
	}
	if got := w.F.(*follow).rebuilds; got != 0 {
		t.Errorf("read the rollout again %d times", got)
	}
}
