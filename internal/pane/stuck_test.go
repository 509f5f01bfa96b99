package pane

import (
	"bytes"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// TestStuckClientNeverSlowsThePane attaches a client that never reads (its
// socket is full: every direct write takes nothing, and its writer never
// asks for frames) beside one that reads. The program's 8 MiB, twice what
// a client may have queued, must reach the reading client and the
// emulator; the stuck one is held to its bound and resynchronised.
func TestStuckClientNeverSlowsThePane(t *testing.T) {
	const mark = "STUCK-TEST-DONE"
	p, err := Start(Config{Argv: []string{"sh", "-c", "read x; head -c 6291456 /dev/zero | tr '\\0' 'x'; echo; echo " + mark + "; sleep 100"}, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(time.Second)
	stuck := p.Attach(80, 24, true)
	defer stuck.Detach()
	stuck.SetDirect(func(b []byte) []byte { return b }, true)
	reader := p.Attach(80, 24, true)
	defer reader.Detach()
	p.Write([]byte("go\n"))

	// A reader the race detector slows may itself be resynchronised, and
	// a snapshot ends with ~200 bytes of modes and cursor after the last
	// line: the mark is looked for in the whole snapshot, not in the tail
	// of the output stream.
	var tail []byte
	for seen := false; !seen && !bytes.Contains(tail, []byte(mark)); {
		frames, ok := reader.Next(t.Context())
		if !ok {
			t.Fatal("the reading client was closed")
		}
		for _, f := range frames {
			if f.Type == proto.FrameSnapshot {
				seen = bytes.Contains(f.Data, []byte(mark))
				tail = tail[:0]
				continue
			}
			tail = append(tail, f.Data...)
		}
		if len(tail) > 64 {
			tail = append(tail[:0], tail[len(tail)-64:]...)
		}
		reader.Sent()
	}
	waitCapture(t, p, mark)
	stuck.mu.Lock()
	queued := stuck.bytes
	stuck.mu.Unlock()
	if queued > clientQueueBytes {
		t.Errorf("the stuck client holds %d bytes, over its bound of %d", queued, clientQueueBytes)
	}
	if stuck.Resyncs() == 0 {
		t.Error("the stuck client was never resynchronised")
	}
}

// TestQueriesOfAProgramThatReadsNothing: with no client attached the
// emulator answers the program's terminal queries; a program that asks
// thousands of times and never reads its input must not stop the pane
// reading its output (the replies used to block on the full input queue,
// and with them the emulator and the reader). Answers it cannot take are
// dropped, as for an Answerer's.
func TestQueriesOfAProgramThatReadsNothing(t *testing.T) {
	const mark = "QUERIES-DONE"
	p, err := Start(Config{Argv: []string{"bash", "-c", `stty -echo -icanon; for ((i = 0; i < 20000; i++)); do printf '\033[6n\033[c'; done; echo; echo ` + mark + `; sleep 100`}, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(time.Second)
	waitCapture(t, p, mark)
}
