package native

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

// TestTrackerReadsOnlyAppends: the tracker reads what was appended since
// its last read, and a transcript replaced by a larger file (a rename over
// it) is read again from its start instead of from the old offset.
func TestTrackerReadsOnlyAppends(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "claude-22222222.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	whole := newTracker("claude", transcript.Env{})
	whole.consume(data)
	want := len(whole.recs)
	if want == 0 {
		t.Fatal("the fixture has no turn records")
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	half := len(data) / 2
	os.WriteFile(path, data[:half], 0o600)
	tr := newTracker("claude", transcript.Env{})
	tr.follow(path, "")
	recs, err := tr.read()
	if err != nil {
		t.Fatal(err)
	}
	got := len(recs)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(data[half:])
	f.Close()
	if recs, err = tr.read(); err != nil {
		t.Fatal(err)
	}
	if got += len(recs); got != want || tr.off != int64(len(data)) {
		t.Fatalf("read in two steps: %d records, offset %d; want %d, %d", got, tr.off, want, len(data))
	}

	// Replaced by a rename: a new file, longer than the old offset.
	repl := filepath.Join(dir, "new.jsonl")
	// Its records all lie before the old offset: read from there, it
	// would give none.
	pad := make([]byte, len(data))
	for i := range pad {
		pad[i] = '\n'
	}
	os.WriteFile(repl, append(append([]byte{}, data...), pad...), 0o600)
	if err := os.Rename(repl, path); err != nil {
		t.Fatal(err)
	}
	if recs, err = tr.read(); err != nil {
		t.Fatal(err)
	}
	if len(recs) != want {
		t.Fatalf("after a replacement: %d records, want the new file read from its start (%d)", len(recs), want)
	}
}
