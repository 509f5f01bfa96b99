package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// followRoots are the trees of transcripts the follow is checked on: the
// package's own (a fork and its original, sub-agents, old shapes) and the
// repository's shared fixtures and real-CLI captures.
var followRoots = []string{
	"testdata",
	filepath.Join(providertest.Shared, "fixtures", "claude"),
	filepath.Join(providertest.Shared, "research", "real-cli", "claude"),
}

// TestFollowMatchesParse: following a transcript as it grows in random
// pieces gives, after each piece, what a whole parse of the same bytes
// gives, items (a fork's inherited ones marked) and usage log included.
func TestFollowMatchesParse(t *testing.T) {
	n := 0
	for _, root := range followRoots {
		var files []string
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return nil
		})
		for _, file := range files {
			rel, _ := filepath.Rel(root, file)
			t.Run(filepath.Base(root)+"/"+rel, func(t *testing.T) {
				// The whole tree, so that a sub-agent finds its meta.json.
				tmp := t.TempDir()
				providertest.CopyTree(t, root, tmp)
				providertest.GrowLines(t, New(), transcript.Env{Home: t.TempDir()}, filepath.Join(tmp, rel), 4)
			})
			n++
		}
	}
	if n < 8 {
		t.Fatalf("followed only %d recorded transcripts", n)
	}
}

// TestFollowReadsAForkOnce: a fork's file, followed whole, is read again
// from its start once (its first copied reply shows that the copied
// prompt before it is inherited), and appends to it after that are read
// alone.
func TestFollowReadsAForkOnce(t *testing.T) {
	data, err := os.ReadFile("testdata/fork/projects/-tmp-rc-work/b0d046f5-d157-4f39-9ac4-001ddb144fb9.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "b0d046f5-d157-4f39-9ac4-001ddb144fb9.jsonl")
	half := strings.Index(string(data), `"content":"fourth prompt delta forked"},"uuid"`)
	half = strings.LastIndexByte(string(data[:half]), '\n') + 1
	if err := os.WriteFile(path, data[:half], 0o644); err != nil {
		t.Fatal(err)
	}
	w := providertest.Follow(t, New(), transcript.Env{Home: t.TempDir()}, path)
	w.SameAsParse(t, "the copies", w.Step(t))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before := w.Read
	w.SameAsParse(t, "the fork's own turn", w.Step(t))
	if read := w.Read - before; read > int64(len(data)-half) {
		t.Errorf("the fork's own turn, %d bytes: read %d", len(data)-half, read)
	}
	if got := w.F.(*follow).rebuilds; got != 1 {
		t.Errorf("read the fork again %d times, want 1", got)
	}
}

// TestParseStreamsOwnItems: a parse that streams its items
// (ParseOptions.Item, as the history index's full-text row takes them)
// ends with the items a whole parse keeps, less the inherited ones it was
// told to forget (Inherit): for a fork, for a file whose records name its
// own session as their original (no fork, nothing to forget), and for one
// where such a record comes after a fork's (the fork taken back).
func TestParseStreamsOwnItems(t *testing.T) {
	fork, err := os.ReadFile("testdata/fork/projects/-tmp-rc-work/b0d046f5-d157-4f39-9ac4-001ddb144fb9.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const orig = "11111111-2222-4333-8444-555555555555"
	prompt := `{"type":"user","sessionId":"s","message":{"role":"user","content":"hello"}}` + "\n"
	reply := func(text, from string) string {
		return `{"type":"assistant","sessionId":"s","requestSessionId":"` + from + `","message":{"role":"assistant","content":[{"type":"text","text":"` + text + `"}]}}` + "\n"
	}
	for _, c := range []struct {
		name, file, data string
	}{
		{"fork", "b0d046f5-d157-4f39-9ac4-001ddb144fb9.jsonl", string(fork)},
		{"self", orig + ".jsonl", string(fork)},
		{"taken back", orig + ".jsonl", prompt + reply("copied", "22222222-2222-4333-8444-555555555555") + reply("own", orig)},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
				t.Fatal(err)
			}
			whole := parseOne(t, path)
			var want []transcript.Item
			for _, it := range whole.Items {
				if !it.Inherited {
					want = append(want, it)
				}
			}
			var got []transcript.Item
			opts := transcript.ParseOptions{
				Item: func(it transcript.Item) {
					if !it.Inherited {
						got = append(got, it)
					}
				},
				Inherit: func() { got = nil },
			}
			if _, err := New().Parse(t.Context(), transcript.Env{Home: t.TempDir()}, path, opts); err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Errorf("streamed %s\nwant     %s", g, w)
			}
		})
	}
}
