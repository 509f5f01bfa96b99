package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

// TestExplainNotesSkippedTranscripts: the transcript files the daemon
// skipped as hostile while following a pane's agent are in explain's
// table, one a row, made safe to print (a file name is anyone's).
func TestExplainNotesSkippedTranscripts(t *testing.T) {
	var b bytes.Buffer
	printExplanation(&b, proto.Explanation{Name: "api", Activity: &proto.Activity{State: "working", Skipped: []string{
		"open /h/.claude/projects/p/a.jsonl: not a regular file (a named pipe)",
		"/h/.claude/projects/p/b\x1b]52;c;x\a.jsonl: 1 lines over 16 MiB skipped",
	}}})
	out := b.String()
	checkTerminalSafe(t, "explain", out)
	for _, want := range []string{
		"\n  transcript  skipped open /h/.claude/projects/p/a.jsonl: not a regular file (a named pipe)\n",
		"\n              skipped /h/.claude/projects/p/b",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
}
