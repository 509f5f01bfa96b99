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

// FuzzScreen reads arbitrary screens as dialogs and limits: a pane's
// screen is whatever its programs print. The seeds are the recorded
// screens, cut down to what is read of them (SeedScreens).
func FuzzScreen(f *testing.F) {
	env := transcript.Env{Home: f.TempDir()}
	providertest.SeedScreens(f, Provider{}, env, "testdata/dialog", "testdata/limit")
	f.Fuzz(func(t *testing.T, screen string) {
		providertest.FuzzScreen(t, Provider{}, env, screen)
	})
}

// FuzzFollow follows an arbitrary chat log appended in arbitrary pieces:
// after each, the follow says what a whole parse says, rewrites, rewinds
// and "$set"s of settled messages included.
func FuzzFollow(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/home/.gemini/tmp/*/chats/*.jsonl")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		providertest.SeedRecords(f, b, []byte{100, 3})
	}
	f.Add([]byte(chatTurn(1)+chatTurn(2)), []byte{40, 90, 7})
	f.Add([]byte(chatTurn(1)+`{"$rewindTo":"u1"}`+"\n"+chatTurn(2)), []byte{30, 30, 30, 30})
	dir := filepath.Join(f.TempDir(), "tmp", "proj", "chats")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(dir, "session-2026-03-01T10-00-aaaaaaaa.jsonl")
	env := transcript.Env{Home: f.TempDir()}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		providertest.FuzzFollow(t, New(), env, path, data, cuts)
	})
}
