package codex

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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
	eachRecordedRollout(t, func(t *testing.T, path string) {
		providertest.GrowLines(t, New(), transcript.Env{Home: t.TempDir()}, path, 4)
	})
}

// TestFollowMatchesParseFlushingEachItem is TestFollowMatchesParse with
// the items handed over one at a time, as a huge rollout's are a few
// thousand at a time: every decision the follow makes early is checked
// against the recorded rollouts' record orders.
func TestFollowMatchesParseFlushingEachItem(t *testing.T) {
	flushEachItem(t)
	eachRecordedRollout(t, func(t *testing.T, path string) {
		providertest.GrowLines(t, New(), transcript.Env{Home: t.TempDir()}, path, 2)
	})
}

// TestParseStreamsAsWhole: a parse that hands its items over
// (ParseOptions.Item, as `muster history` asks) gives the items and the
// session a parse that keeps them gives, for every recorded rollout,
// with items handed over one at a time and in the usual batches.
func TestParseStreamsAsWhole(t *testing.T) {
	for _, each := range []bool{false, true} {
		t.Run(fmt.Sprintf("each item %v", each), func(t *testing.T) {
			if each {
				flushEachItem(t)
			}
			eachRecordedRollout(t, func(t *testing.T, path string) {
				env := transcript.Env{Home: t.TempDir()}
				want, err := New().Parse(t.Context(), env, path, transcript.ParseOptions{})
				if err != nil {
					t.Fatal(err)
				}
				var items []transcript.Item
				got, err := New().Parse(t.Context(), env, path, transcript.ParseOptions{
					Item:    func(it transcript.Item) { items = append(items, it) },
					Inherit: func() { items = nil },
				})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) == 1 {
					got[0].Items = items
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("streamed parse differs (-kept +streamed):\n%s", diff)
				}
			})
		})
	}
}

// flushEachItem makes streaming parses hand their items over one at a
// time for the rest of t.
func flushEachItem(t *testing.T) {
	old := maxHeldItems
	maxHeldItems = 1
	t.Cleanup(func() { maxHeldItems = old })
}

// eachRecordedRollout runs check on a copy of every recorded rollout,
// inside a copy of the tree it was found in, so that a fork finds its
// original.
func eachRecordedRollout(t *testing.T, check func(t *testing.T, path string)) {
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
				tmp := t.TempDir()
				providertest.CopyTree(t, root, tmp)
				check(t, filepath.Join(tmp, rel))
			})
			n++
		}
	}
	if n < 20 {
		t.Fatalf("checked only %d recorded rollouts", n)
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

// TestFollowReadsAgainForLateInheritedRecord: a fork's copied record
// after its own (inherited items come first in a whole parse), and a
// reply event before the first response-item reply (which takes the
// event back), each met after the items before it were handed over:
// the follow reads the file again, one stream a pass, and gives what a
// whole parse gives.
func TestFollowReadsAgainForLateInheritedRecord(t *testing.T) {
	flushEachItem(t)
	path := writeLines(t, "rollout-2026-03-01T10-00-00-cccccccc-0000-4000-8000-00000000000c.jsonl",
		`{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"cccccccc-0000-4000-8000-00000000000c","forked_from_id":"dddddddd-0000-4000-8000-00000000000d","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/src/app","source":"cli"}}`,
		`{"timestamp":"2026-03-01T10:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"own prompt"}}`,
		`{"timestamp":"2026-03-01T10:00:02.000Z","type":"event_msg","payload":{"type":"agent_message","message":"own reply"}}`,
		`{"timestamp":"2026-03-01T09:59:00.000Z","type":"event_msg","payload":{"type":"user_message","message":"copied prompt"}}`,
		`{"timestamp":"2026-03-01T09:59:01.000Z","type":"event_msg","payload":{"type":"agent_message","message":"copied reply"}}`,
		`{"timestamp":"2026-03-01T10:00:03.000Z","type":"event_msg","payload":{"type":"user_message","message":"second prompt"}}`,
		`{"timestamp":"2026-03-01T10:00:04.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"second reply"}]}}`,
		`{"timestamp":"2026-03-01T10:00:04.000Z","type":"event_msg","payload":{"type":"agent_message","message":"second reply"}}`,
	)
	w := providertest.Follow(t, New(), transcript.Env{Home: t.TempDir()}, path)
	got := w.Step(t)
	w.SameAsParse(t, "whole", got)
	inh, own := said(got[0])
	if !slices.Equal(inh, []string{"copied prompt", "copied reply"}) || !slices.Equal(own, []string{"own prompt", "second prompt", "second reply"}) {
		t.Errorf("inherited %q, own %q", inh, own)
	}
	if r := w.F.(*follow).rebuilds; r != 1 {
		t.Errorf("read the rollout again %d times, want 1", r)
	}
}

// TestFollowFirstReadHoldsBoundedMemory: the first read of a large
// rollout, the way the daemon's index follows it (items streamed, no
// usage log), holds a bounded share of it, however late its decision of
// which records to keep is made (issue 22: 453 MB of daemon RSS for a
// 200 MB rollout, whose items were all held until the end of the read).
func TestFollowFirstReadHoldsBoundedMemory(t *testing.T) {
	const size = 32 << 20
	path := filepath.Join(t.TempDir(), "rollout-2026-03-01T10-00-00-bbbbbbbb-0000-4000-8000-00000000000b.jsonl")
	fd, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(fd, 1<<20)
	n, _ := w.WriteString(`{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"bbbbbbbb-0000-4000-8000-00000000000b","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/src/app","originator":"codex_cli_rs","source":"cli"}}` + "\n")
	for turn := 1; n < size; turn++ {
		m, _ := w.WriteString(rolloutTurn(turn))
		n += m
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fd.Close()

	held, items := providertest.FirstReadHeld(t, New(), transcript.Env{Home: t.TempDir()}, path)
	t.Logf("%d MB rollout, %d items: live heap at most %.1f MB above the start", size>>20, items, float64(held)/(1<<20))
	if held > 16<<20 {
		t.Errorf("the first read of a %d MB rollout held %d MB; want at most 16", size>>20, held>>20)
	}
}
