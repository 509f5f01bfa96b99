package cursor

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/transcript"
)

// shared is ../shared beside the checkout (CI), seen from this package.
const shared = "../../../../shared"

// TestConformance parses whatever third-party Cursor fixtures and real-CLI
// captures ../shared holds. At the time of writing it holds none (the
// research did not run the Cursor CLI), so the test data here is built from
// the documented shapes; see testdata/README.md.
func TestConformance(t *testing.T) {
	var files []string
	for _, root := range []string{
		filepath.Join(shared, "fixtures", "cursor"),
		filepath.Join(shared, "research", "real-cli", "cursor", "transcripts"),
	} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			switch filepath.Ext(p) {
			case ".jsonl", ".txt", ".db":
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) == 0 {
		if _, err := os.Stat(shared); err != nil {
			t.Skipf("no %s beside the checkout", shared)
		}
		t.Skip("../shared holds no Cursor fixtures or captures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			full := parse(t, f, transcript.ParseOptions{})
			sum := parse(t, f, transcript.ParseOptions{SummaryOnly: true})
			if diff := cmp.Diff(full.Session, sum.Session); diff != "" {
				t.Errorf("summary differs (-full +summary):\n%s", diff)
			}
			if full.PromptCount > 0 && (full.FirstPrompt == "" || full.Title == "") {
				t.Errorf("%d prompts but first prompt %q, title %q", full.PromptCount, full.FirstPrompt, full.Title)
			}
		})
	}
}
