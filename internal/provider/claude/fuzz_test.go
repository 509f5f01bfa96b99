package claude

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/transcript"
)

// FuzzParse runs the parser on arbitrary transcript bytes. The seeds are
// the testdata transcripts cut into records and pairs of consecutive
// records, and the file and home are made once: whole 14 KB transcripts as
// seeds and two temporary directories per input kept the minimizer, which
// is quadratic in the input's size, busy for its full minute on each new
// input (under 3,000 executions a minute).
func FuzzParse(f *testing.F) {
	filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			b, _ := os.ReadFile(p)
			addRecords(f, b)
		}
		return nil
	})
	path := filepath.Join(f.TempDir(), "11111111-2222-4333-8444-555555555555.jsonl")
	env := transcript.Env{Home: f.TempDir()}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		first, err := New().Parse(context.Background(), env, path, transcript.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		again, err := New().Parse(context.Background(), env, path, transcript.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("second parse differs:\n%s", cmp.Diff(first, again))
		}
		sum, err := New().Parse(context.Background(), env, path, transcript.ParseOptions{SummaryOnly: true})
		if err != nil || len(sum) != len(first) {
			t.Fatalf("summary: %v, %d vs %d transcripts", err, len(sum), len(first))
		}
		for i := range first {
			a, b := first[i].Session, sum[i].Session
			if a.PromptCount != b.PromptCount || a.ToolCallCount != b.ToolCallCount || a.FirstPrompt != b.FirstPrompt || a.Title != b.Title || !cmp.Equal(a.Usage, b.Usage) {
				t.Fatalf("summary disagrees:\n%+v\n%+v", a, b)
			}
		}
	})
}

// addRecords adds each line of a JSONL transcript, and each pair of
// consecutive lines, as a seed.
func addRecords(f *testing.F, b []byte) {
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i := range lines {
		f.Add(lines[i])
		if i+1 < len(lines) {
			f.Add(bytes.Join(lines[i:i+2], nil))
		}
	}
}
