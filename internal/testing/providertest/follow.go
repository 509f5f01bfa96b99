package providertest

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/transcript"
)

// Following is one file's transcript.Follow, fed the way the history
// watcher feeds it (internal/history's followCache): from the offset the
// last Feed stopped at, through the open file, with the items streamed to
// a ParseOptions.Item that Inherit empties. Read counts the bytes the
// follow read through that file.
type Following struct {
	Src   transcript.Source
	Env   transcript.Env
	Path  string
	F     transcript.Follow
	Off   int64
	Read  int64
	items []transcript.Item
}

// Follow starts following path, failing the test when src does not
// follow it.
func Follow(t testing.TB, src transcript.Source, env transcript.Env, path string) *Following {
	t.Helper()
	fw, ok := src.(transcript.Follower)
	if !ok {
		t.Fatalf("%s does not follow its transcripts (transcript.Follower)", src.Provider())
	}
	w := &Following{Src: src, Env: env, Path: path}
	w.F = fw.Follow(env, path, transcript.ParseOptions{
		Item:    func(it transcript.Item) { w.items = append(w.items, it) },
		Inherit: func() { w.items = nil },
	})
	if w.F == nil {
		t.Fatalf("%s does not follow %s", src.Provider(), path)
	}
	return w
}

// countingFile counts what is read of a file through it.
type countingFile struct {
	f *os.File
	n *int64
}

func (c countingFile) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	*c.n += int64(n)
	return n, err
}

func (c countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.f.ReadAt(p, off)
	*c.n += int64(n)
	return n, err
}

// Len is what is left to read, so that a line scanner fits its buffer to
// it as it does to the *os.File the history watcher passes (allocating
// 256 KiB on each Feed made following in small pieces several times
// slower).
func (c countingFile) Len() int {
	fi, err := c.f.Stat()
	if err != nil {
		return -1
	}
	off, err := c.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return -1
	}
	return int(max(0, fi.Size()-off))
}

// Step feeds what was written since the last step and returns the
// transcripts with every item streamed so far (and those the follow
// returns itself, not yet settled) in Items.
func (w *Following) Step(t testing.TB) []*transcript.Transcript {
	t.Helper()
	fd, err := os.Open(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if _, err := fd.Seek(w.Off, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	n, err := w.F.Feed(t.Context(), countingFile{fd, &w.Read})
	if err != nil {
		t.Fatalf("feed %s: %v", w.Path, err)
	}
	w.Off += n
	ts := w.F.Transcripts()
	if len(ts) == 1 {
		c := *ts[0]
		c.Items = append(append([]transcript.Item(nil), w.items...), ts[0].Items...)
		ts = []*transcript.Transcript{&c}
	}
	return ts
}

// SameAsParse fails the test when got differs from a whole parse of the
// file as it is now (items and the usage log included).
func (w *Following) SameAsParse(t testing.TB, step string, got []*transcript.Transcript) {
	t.Helper()
	want, err := w.Src.Parse(t.Context(), w.Env, w.Path, transcript.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(g) != string(wj) {
		t.Fatalf("%s: follow and parse differ (-parse +follow):\n%s", step, cmp.Diff(string(wj), string(g)))
	}
	for i := range want {
		if diff := cmp.Diff(want[i].UsageLog, got[i].UsageLog); diff != "" {
			t.Fatalf("%s: usage logs differ (-parse +follow):\n%s", step, diff)
		}
	}
}

// CopyTree copies the regular files under src to dst.
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// GrowLines checks a follower of a log that grows by appends (JSONL):
// file, a copy of a real transcript at path (inside a copy of the tree it
// was found in), is written again from nothing in rounds of random pieces
// cut anywhere, mid-line too; after each round its complete lines are
// followed and compared with a whole parse of them (SameAsParse), and the
// file ends whole. rounds sets of cuts are tried, seeded for repeatability.
func GrowLines(t *testing.T, src transcript.Source, env transcript.Env, path string, rounds int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for round := range rounds {
		rng := rand.New(rand.NewPCG(uint64(round), 22))
		var cuts []int
		for c := 0; c < len(data); {
			c = min(len(data), c+1+rng.IntN(max(1, len(data)/4)))
			cuts = append(cuts, c)
		}
		growAt(t, src, env, path, data, cuts)
	}
}

// growAt writes data to path from nothing, up to each of cuts in turn,
// and checks after each that a follow of the complete lines says what a
// whole parse of them says; the file ends whole.
func growAt(t testing.TB, src transcript.Source, env transcript.Env, path string, data []byte, cuts []int) {
	t.Helper()
	size := resize(t, path, data, -1, 0)
	w := Follow(t, src, env, path)
	for _, cut := range cuts {
		// What an agent has written so far, its unfinished line aside:
		// a whole parse would call that line malformed.
		whole := cut
		for whole > 0 && data[whole-1] != '\n' {
			whole--
		}
		size = resize(t, path, data, size, cut)
		got := w.Step(t)
		// A follow consumes the complete lines it parsed, which a parse
		// then reads alone. One that consumed fewer reads the file from
		// its start on every Feed (transcript.Follow: a chat log that
		// turns out to be one document, not lines), its unfinished end
		// too: it says what a parse of the file as it was fed says.
		upTo := whole
		if w.Off < int64(whole) {
			upTo = cut
		}
		size = resize(t, path, data, size, upTo)
		w.SameAsParse(t, filepath.Base(path)+": after "+itoa(upTo)+" of "+itoa(len(data))+" bytes", got)
	}
	resize(t, path, data, size, len(data))
}

// resize makes the file at path hold data[:n], from data[:size] (size -1:
// anything) and returns n. It appends and cuts rather than writing the
// file again, and makes a new file rather than cutting one to nothing: on
// ext4, the close of a file truncated to zero flushes its data
// (auto_da_alloc), which made following in pieces over ten times slower
// there than on tmpfs.
func resize(t testing.TB, path string, data []byte, size, n int) int {
	t.Helper()
	var err error
	switch {
	case size == n:
	case size < 0 || n == 0:
		if err = os.Remove(path); err == nil || errors.Is(err, fs.ErrNotExist) {
			err = os.WriteFile(path, data[:n], 0o644)
		}
	case n < size:
		err = os.Truncate(path, int64(n))
	default:
		var f *os.File
		if f, err = os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			_, err = f.WriteAt(data[size:n], int64(size))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// FuzzFollow is the body of a provider's fuzz target for its follow of a
// log that grows by appends: data written to path in pieces, cut where
// the bytes of cuts say (each a share of the file, in 256ths), is
// followed, and after each piece the follow must say what a whole parse
// of the complete lines says.
func FuzzFollow(t *testing.T, src transcript.Source, env transcript.Env, path string, data, cuts []byte) {
	var at []int
	for c, i := 0, 0; c < len(data); i++ {
		step := 1
		if i < len(cuts) {
			step += int(cuts[i]) * len(data) / 256
		} else {
			step = len(data)
		}
		c = min(len(data), c+step)
		at = append(at, c)
	}
	growAt(t, src, env, path, data, at)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// FirstReadHeld follows path from its start in one Feed, the way the
// history index does (items streamed, no usage log), and returns the
// most live heap the read held above what there was before it, measured
// after a collection every few thousand items, and the number of items.
// A parse that keeps what it read grows with the file; one that streams
// holds its summary state and a bounded share of the items.
func FirstReadHeld(t testing.TB, src transcript.Source, env transcript.Env, path string) (held int64, items int) {
	t.Helper()
	live := func() int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	base := live()
	f := src.(transcript.Follower).Follow(env, path, transcript.ParseOptions{
		Item: func(transcript.Item) {
			if items++; items%5000 == 0 {
				held = max(held, live()-base)
			}
		},
		Inherit:    func() {},
		NoUsageLog: true,
	})
	if f == nil {
		t.Fatalf("%s does not follow %s", src.Provider(), path)
	}
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if _, err := f.Feed(t.Context(), fd); err != nil {
		t.Fatal(err)
	}
	held = max(held, live()-base)
	ts := f.Transcripts()
	if len(ts) != 1 || ts[0].PromptCount == 0 || items == 0 {
		t.Fatalf("%s: %d transcripts, %d items", path, len(ts), items)
	}
	runtime.KeepAlive(f)
	return held, items
}
