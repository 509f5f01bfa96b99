package cursor

import (
	"path/filepath"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// TestConformance runs the conformance check over this package's own test
// data: no third-party Cursor fixture or real-CLI capture exists (the
// research did not run the Cursor CLI), so the files are built from the
// documented shapes; see testdata/README.md.
func TestConformance(t *testing.T) {
	providertest.Conformance{
		Dir:   "testdata",
		Roots: []string{"."},
		Match: func(p string) bool {
			switch filepath.Ext(p) {
			case ".jsonl", ".txt", ".db":
				return true
			}
			return false
		},
		Parse: func(t testing.TB, path string, opts transcript.ParseOptions) []*transcript.Transcript {
			return []*transcript.Transcript{parse(t.(*testing.T), path, opts)}
		},
		Check: func(t *testing.T, _ string, full []*transcript.Transcript) { providertest.CheckTitled(t, full[0]) },
	}.Run(t)
}
