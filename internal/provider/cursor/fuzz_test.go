package cursor

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/transcript"
)

// FuzzParse runs the three readers on arbitrary input: kind 0 is JSONL,
// 1 the legacy text format, 2 a chat-store blob.
func FuzzParse(f *testing.F) {
	for kind, file := range []string{"testdata/transcript.jsonl", "testdata/legacy.txt", "testdata/store.json"} {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(kind))
	}
	f.Add([]byte("\x0a\x05{\"role\":\"user\",\"content\":\"<user_query>x</user_query>\"}\x12{\"a\":[{\"role\":1}]"), uint8(2))
	f.Add([]byte("assistant:\n[Tool result]\n  orphan\n[Tool call] X\n  =bad\n  k=v\n  more\n"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		parse := func(opts transcript.ParseOptions) *transcript.Transcript {
			b := newBuilder("x", "x", opts)
			switch kind % 3 {
			case 0:
				parseJSONL(b, string(data))
			case 1:
				parseText(b, string(data))
			case 2:
				for _, m := range embeddedMessages(data) {
					b.storeMessage(m)
				}
			}
			return b.finish()
		}
		a, b := parse(transcript.ParseOptions{}), parse(transcript.ParseOptions{})
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("two parses differ:\n%s", cmp.Diff(a, b))
		}
		if _, err := json.Marshal(a); err != nil {
			t.Fatalf("marshal: %v", err)
		}
		sum := parse(transcript.ParseOptions{SummaryOnly: true})
		sum.Warnings = a.Warnings // summary parses read no images
		if !reflect.DeepEqual(a.Session, sum.Session) {
			t.Fatalf("summary differs from full:\n%s", cmp.Diff(a.Session, sum.Session))
		}
	})
}
