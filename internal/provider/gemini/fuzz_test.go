package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/transcript"
)

// FuzzParse runs the parser on arbitrary file contents, both as a .jsonl
// patch log and as a legacy .json (Parse adds only the file read and the
// cwd lookup, covered by the other tests).
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/home/.gemini/tmp/*/chats/*.json*")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, strings.HasSuffix(s, ".json"))
	}
	f.Add([]byte(`{"$rewindTo":"a"}`+"\n"+`{"id":"a","type":"user","content":"x"}`), false)
	f.Add([]byte(`{"$set":{"messages":[1,{"id":2},{"id":"b","type":"gemini","toolCalls":[{"args":[]}],"tokens":{"input":"x"}}]}}`), false)
	f.Add([]byte(`{"messages":{"id":"x"},"sessionId":5}`), true)
	f.Fuzz(func(t *testing.T, data []byte, legacy bool) {
		parse := func(opts transcript.ParseOptions) *transcript.Transcript {
			return load(string(data), legacy).build("chats/session.jsonl", opts)
		}
		a := parse(transcript.ParseOptions{})
		b := parse(transcript.ParseOptions{})
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("two parses differ:\n%s", cmp.Diff(a, b))
		}
		if _, err := json.Marshal(a); err != nil {
			t.Fatalf("marshal: %v", err)
		}
		sum := parse(transcript.ParseOptions{SummaryOnly: true})
		// Summary parses read no images, so image warnings may differ.
		sum.Warnings = a.Warnings
		if !reflect.DeepEqual(a.Session, sum.Session) {
			t.Fatalf("summary differs from full:\n%s", cmp.Diff(a.Session, sum.Session))
		}
		if len(sum.Items) != 0 {
			t.Fatalf("summary parse built %d items", len(sum.Items))
		}
	})
}
