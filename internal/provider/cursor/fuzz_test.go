package cursor

import (
	"bytes"
	"os"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
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
				parseJSONL(b, bytes.NewReader(data))
			case 1:
				parseText(b, bytes.NewReader(data))
			case 2:
				for _, m := range embeddedMessages(data) {
					b.storeMessage(m)
				}
			}
			return b.finish()
		}
		providertest.Repeatable(t, func(opts transcript.ParseOptions) []*transcript.Transcript {
			return []*transcript.Transcript{parse(opts)}
		}, providertest.SameSession)
	})
}
