package hookevent

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestSlowPayloadIsReadToItsEnd: a payload that keeps arriving is read
// however long it takes in all (within maxPayloadWait), as a 32 MiB one
// on a loaded machine can outlast the idle bound; one that stops
// arriving is given up after the idle bound. Before, the bound was on the
// whole read and the slow payload failed with "no end of input".
func TestSlowPayloadIsReadToItsEnd(t *testing.T) {
	const idle = 500 * time.Millisecond
	piece := `{"hook_event_name":"Stop","x":"` + strings.Repeat("a", 1000)
	r, w := io.Pipe()
	go func() {
		// 40 pieces 50 ms apart: twice the idle bound in all, a tenth
		// of it between pieces.
		w.Write([]byte(piece))
		for range 40 {
			time.Sleep(50 * time.Millisecond)
			w.Write([]byte(strings.Repeat("a", 1000)))
		}
		w.Write([]byte(`"}`))
		w.Close()
	}()
	b, err := readPayload(r, idle)
	if err != nil {
		t.Fatalf("a payload that kept arriving was given up: %v", err)
	}
	if want := len(piece) + 40*1000 + 2; len(b) != want {
		t.Fatalf("read %d bytes, want %d", len(b), want)
	}

	stalled, w2 := io.Pipe()
	defer w2.Close()
	go w2.Write([]byte(piece))
	if _, err := readPayload(stalled, idle); err == nil || !strings.Contains(err.Error(), "nothing read for") {
		t.Fatalf("a payload that stopped arriving: err %v, want nothing read for %v", err, idle)
	}
}
