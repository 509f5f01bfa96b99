package claude

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/testing/providertest"
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
			providertest.SeedRecords(f, b)
		}
		return nil
	})
	path := filepath.Join(f.TempDir(), "11111111-2222-4333-8444-555555555555.jsonl")
	env := transcript.Env{Home: f.TempDir()}
	f.Fuzz(func(t *testing.T, data []byte) {
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
			switch {
			case full.Title != sum.Title:
				return "Title"
			case !cmp.Equal(full.Usage, sum.Usage):
				return "Usage"
			}
			return providertest.Counts(full, sum)
		})
	})
}
