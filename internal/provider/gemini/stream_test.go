package gemini

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

// TestParseStreamsAndBounds: a single-document chat is read message by
// message, a message or line over the limit is skipped with a warning (the
// others kept), and the items go to ParseOptions.Item when it is set.
func TestParseStreamsAndBounds(t *testing.T) {
	defer func(n int) { maxRecord = n }(maxRecord)
	maxRecord = 4096
	big := strings.Repeat("x", 5000)
	msg := func(id, text string) string {
		return fmt.Sprintf(`{"id":%q,"type":"user","timestamp":"2026-03-01T10:00:0%sZ","content":[{"text":%q}]}`, id, id[1:], text)
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "session-2026-03-01T10-00-aaaa.json")
	os.WriteFile(doc, []byte(`{"sessionId":"s1","startTime":"2026-03-01T10:00:00Z","messages":[`+
		msg("m1", "first")+","+msg("m2", big)+","+msg("m3", "third")+`],"summary":"sum"}`), 0o600)
	lines := filepath.Join(dir, "session-2026-03-01T10-00-bbbb.jsonl")
	os.WriteFile(lines, []byte(`{"sessionId":"s2","startTime":"2026-03-01T10:00:00Z"}`+"\n"+
		msg("m1", "first")+"\n"+msg("m2", big)+"\n"+msg("m3", "third")+"\n"), 0o600)

	for _, c := range []struct{ path, warning string }{
		{doc, "message 2: over 4096 bytes; skipped"},
		{lines, "line 3: over 4096 bytes; skipped"},
	} {
		var got []string
		tr := parseFile(t, c.path, transcript.ParseOptions{Item: func(it transcript.Item) { got = append(got, it.Text) }})
		if tr.PromptCount != 2 || strings.Join(got, ",") != "first,third" || len(tr.Items) != 0 {
			t.Errorf("%s: %d prompts, streamed %q, kept %d items", filepath.Base(c.path), tr.PromptCount, got, len(tr.Items))
		}
		if !strings.Contains(strings.Join(tr.Warnings, "\n"), c.warning) {
			t.Errorf("%s: warnings %q, want %q", filepath.Base(c.path), tr.Warnings, c.warning)
		}
		tr = parseFile(t, c.path, transcript.ParseOptions{})
		if len(tr.Items) != 2 {
			t.Errorf("%s without a sink: %d items", filepath.Base(c.path), len(tr.Items))
		}
	}
	if tr := parseFile(t, doc, transcript.ParseOptions{}); tr.ID != "s1" || tr.Title != "sum" {
		t.Errorf("metadata after the messages: id %q title %q", tr.ID, tr.Title)
	}
}
