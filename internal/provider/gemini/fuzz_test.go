package gemini

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
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
		providertest.Repeatable(t, func(opts transcript.ParseOptions) []*transcript.Transcript {
			t, _ := read(bytes.NewReader(data), "chats/session.jsonl", legacy, opts)
			return []*transcript.Transcript{t}
		}, func(full, sum *transcript.Transcript) string {
			if len(sum.Items) != 0 {
				return "items (a summary parse builds none)"
			}
			return providertest.SameSession(full, sum)
		})
	})
}
