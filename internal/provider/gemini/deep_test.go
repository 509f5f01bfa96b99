package gemini

import (
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

// TestDeepNestingIsMalformed: a line of 16 MiB of '[' (gjson.Valid
// overflowed the stack on it, killing the process) is malformed JSON.
func TestDeepNestingIsMalformed(t *testing.T) {
	deep := strings.Repeat("[", 16<<20)
	for _, legacy := range []bool{false, true} {
		tr, _ := read(strings.NewReader(`{"sessionId":"s"}`+"\n"+deep), "chats/session.jsonl", legacy, transcript.ParseOptions{})
		if legacy {
			continue // a legacy document that is not JSON: nothing to read
		}
		if !strings.Contains(strings.Join(tr.Warnings, "\n"), "malformed JSON") {
			t.Errorf("warnings = %q, want the deep line called malformed", tr.Warnings)
		}
	}
}
