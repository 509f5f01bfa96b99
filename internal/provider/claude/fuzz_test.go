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

// FuzzFollow follows arbitrary transcript bytes appended in arbitrary
// pieces: after each, the follow says what a whole parse says.
func FuzzFollow(f *testing.F) {
	filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			b, _ := os.ReadFile(p)
			providertest.SeedRecords(f, b, []byte{100, 3})
		}
		return nil
	})
	path := filepath.Join(f.TempDir(), "11111111-2222-4333-8444-555555555555.jsonl")
	env := transcript.Env{Home: f.TempDir()}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		providertest.FuzzFollow(t, New(), env, path, data, cuts)
	})
}
