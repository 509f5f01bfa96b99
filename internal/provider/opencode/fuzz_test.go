package opencode

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// FuzzParse feeds arbitrary documents to the JSON side (exports and legacy
// session files), which shares the message and part conversion with the
// database reader.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"testdata/data/opencode/storage/*/*/*.json", filepath.Join(providertest.Shared, "fixtures/opencode/*/*.json"), filepath.Join(providertest.Shared, "research/real-cli/opencode/transcripts/export-*.json")} {
		seeds, _ := filepath.Glob(glob)
		for _, s := range seeds {
			b, err := os.ReadFile(s)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`{"info":{"id":"s"},"messages":[{"info":{"role":"assistant","summary":true,"tokens":{"input":"x"}},"parts":[{"type":"compaction"},{"type":"tool","state":{"status":"error","error":{"a":1}}},{"type":"file","mime":"image/png","url":"data:image/png;base64,@@"}]}]}`))
	f.Add([]byte(`{"id":"ses_1","title":"New session - 2025-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		parse := func(opts transcript.ParseOptions) *transcript.Transcript {
			return parseJSON(bytes.NewReader(data), "x/storage/session/p/ses.json", opts)
		}
		providertest.Repeatable(t, func(opts transcript.ParseOptions) []*transcript.Transcript {
			return []*transcript.Transcript{parse(opts)}
		}, providertest.SameSession)
	})
}
