package history

import (
	"strconv"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

// distinctWords counts the distinct tokens of s as the index's
// tokenizer folds them.
func distinctWords(s string) int {
	seen := map[string]bool{}
	for _, tk := range tokens(s, len(s)) {
		seen[strings.ToLower(s[tk[0]:tk[1]])] = true
	}
	return len(seen)
}

// TestRowWordsBounded: a session whose prompts are all different words
// gives the full-text index a row of a bounded number of distinct
// tokens, which SQLite's FTS5 holds in memory while it inserts the row
// (issue 22: 175,000 of them took the daemon 63 MB); a session that
// repeats its words, as prose and code do, still fills its columns to
// their byte cap.
func TestRowWordsBounded(t *testing.T) {
	var d docBuilder
	for i := range 300_000 {
		d.add(transcript.Item{Kind: transcript.UserPrompt, Text: "prompt " + strconv.Itoa(i)})
		d.add(transcript.Item{Kind: transcript.ToolResult, Text: "sha " + strconv.FormatInt(int64(i)*7919, 36)})
	}
	row := d.doc(transcript.Session{})
	for name, col := range map[string]string{"said": row.said, "tools": row.tools} {
		n := distinctWords(col)
		t.Logf("%s: %d bytes, %d distinct words", name, len(col), n)
		if n > 40_000 || n < 20_000 {
			t.Errorf("%s: %d distinct words; want about 33,000", name, n)
		}
	}

	var prose docBuilder
	words := strings.Fields("the change compiles and the tests pass but the build cache was cold so it took a while longer than usual")
	for i := range 50_000 {
		prose.add(transcript.Item{Kind: transcript.AssistantText, Text: strings.Join(words[i%len(words):], " ") + " " + strconv.Itoa(i%5000)})
	}
	if n := len(prose.doc(transcript.Session{}).said); n < capColumn-capSaid {
		t.Errorf("prose filled %d bytes of its column; want its cap", n)
	}
}
