package claude

import (
	"testing"

	"github.com/musterhq/muster/internal/testing/bigtranscript"
	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// TestFollowFirstReadHoldsBoundedMemory: the first read of a large
// transcript, the way the daemon's index follows it, holds a bounded
// share of it (issue 22: the parse grew with the tool-use ids, usage keys and parent uuids it must remember, held as strings in maps (and the usage log): 53 MB for a 200 MB transcript).
func TestFollowFirstReadHoldsBoundedMemory(t *testing.T) {
	const size = 64 << 20
	home := t.TempDir()
	w, err := bigtranscript.New(Name, home)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Fill(size); err != nil {
		t.Fatal(err)
	}
	held, items := providertest.FirstReadHeld(t, New(), transcript.Env{Home: home, Getenv: func(string) string { return "" }}, w.Path)
	t.Logf("%d MB transcript, %d items: live heap at most %.1f MB above the start", size>>20, items, float64(held)/(1<<20))
	if held > 4<<20 {
		t.Errorf("the first read of a %d MB transcript held %d MB; want at most 4", size>>20, held>>20)
	}
}
