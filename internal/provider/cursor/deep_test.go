package cursor

import (
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

// TestDeepNestingIsMalformed: a line or a store blob of 16 MiB of '['
// (gjson.Valid overflowed the stack on it, killing the process) is
// malformed JSON.
func TestDeepNestingIsMalformed(t *testing.T) {
	deep := strings.Repeat("[", 16<<20)
	b := newBuilder("x", "x", transcript.ParseOptions{})
	parseJSONL(b, strings.NewReader(deep))
	if tr := b.finish(); !strings.Contains(strings.Join(tr.Warnings, "\n"), "malformed JSON") {
		t.Errorf("warnings = %q, want the deep line called malformed", tr.Warnings)
	}
	if msgs := embeddedMessages([]byte(`{"role":"user","content":` + deep + `}`)); len(msgs) != 0 {
		t.Errorf("%d messages read from a deep blob", len(msgs))
	}
}
