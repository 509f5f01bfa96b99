package claude

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/transcript"
)

func FuzzParse(f *testing.F) {
	filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			b, _ := os.ReadFile(p)
			f.Add(b)
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "11111111-2222-4333-8444-555555555555.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		env := transcript.Env{Home: t.TempDir()}
		first, err := New().Parse(context.Background(), env, path, transcript.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		again, err := New().Parse(context.Background(), env, path, transcript.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("second parse differs:\n%s", diff)
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
