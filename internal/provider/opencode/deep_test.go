package opencode

import (
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

// TestDeepNestingIsMalformed: a document of 16 MiB of '[' (gjson.Valid
// overflowed the stack on it, killing the process) is not read.
func TestDeepNestingIsMalformed(t *testing.T) {
	tr := parseJSON(strings.NewReader(`{"info":`+strings.Repeat("[", 16<<20)), "/x/ses_1.json", transcript.ParseOptions{})
	if !strings.Contains(strings.Join(tr.Warnings, "\n"), "not a JSON object") {
		t.Errorf("warnings = %q, want the document refused", tr.Warnings)
	}
}
