package opencode

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// TestFollowMatchesParse: a legacy session of the package's tree (whose
// part files include a truncated one) written again file by file, in
// random batches and with parts sometimes before their message (never
// after the next message: see Follow), follows to what a whole parse of
// the tree so far gives after each batch (items and usage log included),
// with one or two messages kept open.
func TestFollowMatchesParse(t *testing.T) {
	src := filepath.Join("testdata", "data", "opencode", "storage")
	sessions, _ := filepath.Glob(filepath.Join(src, "session", "*", "*.json"))
	if len(sessions) < 2 {
		t.Fatalf("found %d legacy sessions", len(sessions))
	}
	for _, sess := range sessions {
		id := strings.TrimSuffix(filepath.Base(sess), ".json")
		for _, tail := range []int{1, 2} {
			for seed := range 4 {
				t.Run(fmt.Sprintf("%s/open%d/seed%d", id, tail, seed), func(t *testing.T) {
					defer func(old int) { openTail = old }(openTail)
					openTail = tail
					storage := filepath.Join(t.TempDir(), "storage")
					providertest.CopyTree(t, filepath.Join(src, "session"), filepath.Join(storage, "session"))
					providertest.CopyTree(t, filepath.Join(src, "project"), filepath.Join(storage, "project"))
					// The files the session grows by, messages in their
					// order, each followed by its parts.
					var files []string
					rng := rand.New(rand.NewPCG(uint64(seed), 22))
					msgs, _ := filepath.Glob(filepath.Join(src, "message", id, "*.json"))
					slices.Sort(msgs)
					for _, m := range msgs {
						parts, _ := filepath.Glob(filepath.Join(src, "part", strings.TrimSuffix(filepath.Base(m), ".json"), "*.json"))
						slices.Sort(parts)
						group := append([]string{m}, parts...)
						rng.Shuffle(len(group), func(i, j int) { group[i], group[j] = group[j], group[i] })
						files = append(files, group...)
					}
					path := filepath.Join(storage, "session", filepath.Base(filepath.Dir(sess)), filepath.Base(sess))
					w := providertest.Follow(t, New(), transcript.Env{Home: t.TempDir()}, path)
					w.SameAsParse(t, "empty", w.Step(t))
					for i := 0; i < len(files); {
						n := 1 + rng.IntN(3)
						for _, f := range files[i:min(i+n, len(files))] {
							rel, _ := filepath.Rel(src, f)
							data, err := os.ReadFile(f)
							if err != nil {
								t.Fatal(err)
							}
							os.MkdirAll(filepath.Join(storage, filepath.Dir(rel)), 0o755)
							os.WriteFile(filepath.Join(storage, rel), data, 0o644)
						}
						i += n
						w.SameAsParse(t, fmt.Sprintf("after %d of %d files", min(i, len(files)), len(files)), w.Step(t))
					}
				})
			}
		}
	}
}

// legacyTurn writes one turn of a legacy session as OpenCode does: a user
// message and an assistant one, each with a text part; it returns the
// bytes written.
func legacyTurn(t *testing.T, storage string, n int) int64 {
	created := 1772359200000 + int64(n)*1000
	var written int64
	for i, body := range []string{
		fmt.Sprintf(`{"id":"msg_%08du","sessionID":"ses_bench","role":"user","time":{"created":%d}}`, n, created),
		fmt.Sprintf(`{"id":"msg_%08da","sessionID":"ses_bench","role":"assistant","modelID":"m","time":{"created":%d,"completed":%d},"tokens":{"input":10,"output":5}}`, n, created+1, created+2),
	} {
		kind := "ua"[i : i+1]
		id := fmt.Sprintf("msg_%08d%s", n, kind)
		text := fmt.Sprintf("prompt %d", n)
		if kind == "a" {
			text = strings.Repeat("The change compiles and the tests pass. ", 50)
		}
		part := fmt.Sprintf(`{"id":"prt_%08d%s","type":"text","text":%q}`, n, kind, text)
		for path, data := range map[string]string{
			filepath.Join(storage, "message", "ses_bench", id+".json"): body,
			filepath.Join(storage, "part", id, "prt_1.json"):           part,
		} {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			written += int64(len(data))
		}
	}
	return written
}

// TestFollowReadsOnlyAppends: each turn added to a legacy session costs
// reading the session file and the new message and part files, not the
// tree (issue 22: every turn re-read the whole session, 41 % of a core at
// 200 MB), and what it says is what a whole parse says.
func TestFollowReadsOnlyAppends(t *testing.T) {
	storage := filepath.Join(t.TempDir(), "storage")
	path := filepath.Join(storage, "session", "proj", "ses_bench.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	head := `{"id":"ses_bench","title":"bench","directory":"/src/app","time":{"created":1772359200000,"updated":1772359200000}}`
	os.WriteFile(path, []byte(head), 0o644)
	for n := 1; n <= 200; n++ {
		legacyTurn(t, storage, n)
	}
	w := providertest.Follow(t, New(), transcript.Env{Home: t.TempDir()}, path)
	w.SameAsParse(t, "first", w.Step(t))
	f := w.F.(*follow)
	// Settled messages, and their part files' contents, are not kept
	// (a 200 MB session once kept 489 MB of the daemon's RSS).
	if len(f.open) != openTail || cap(f.open) > 4*openTail {
		t.Fatalf("%d open messages in an array of %d after the first feed", len(f.open), cap(f.open))
	}
	for n := 201; n <= 210; n++ {
		written := legacyTurn(t, storage, n)
		before := w.Read + f.read
		got := w.Step(t)
		if read := w.Read + f.read - before; read > written+int64(len(head)) {
			t.Fatalf("turn %d of %d bytes: read %d bytes", n, written, read)
		}
		w.SameAsParse(t, fmt.Sprintf("turn %d", n), got)
	}
	if f.rebuilds != 0 {
		t.Errorf("read the tree again %d times", f.rebuilds)
	}
}

// TestFollowParsesAnExportWhole: an export document where a session file
// would be is parsed whole as a stream on each Feed, as Parse does.
func TestFollowParsesAnExportWhole(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(providertest.Shared, "fixtures", "opencode", "entire-cli", "attribution_export.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "storage", "session", "proj", "ses_export.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, data, 0o644)
	w := providertest.Follow(t, New(), transcript.Env{Home: t.TempDir()}, path)
	for i := range 2 {
		got := w.Step(t)
		if len(got) != 1 || got[0].PromptCount == 0 {
			t.Fatalf("step %d: %+v", i, got)
		}
		w.SameAsParse(t, fmt.Sprintf("step %d", i), got)
	}
}
