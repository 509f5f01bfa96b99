package pane

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// TestFloodIsGathered: a flood reaches a client exactly and in order, in
// chunks larger than one read of the PTY gives (the tty layer hands the
// master at most a few KiB per read), because the reader reads on while
// output is waiting before it publishes.
func TestFloodIsGathered(t *testing.T) {
	// Half the client's queue: a client that falls a whole queue behind
	// is resynchronised with a screen snapshot instead of the stream (by
	// design), and a 4 MiB flood was resynchronised so once, on a loaded
	// machine under -race, when this reader did not run while it came.
	var payload bytes.Buffer
	for i := 0; payload.Len() < clientQueueBytes/2; i++ {
		fmt.Fprintf(&payload, "line-%d the quick brown fox jumps over the lazy dog\n", i)
	}
	file := filepath.Join(t.TempDir(), "payload")
	if err := os.WriteFile(file, payload.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Start(Config{Argv: []string{"sh", "-c", "read x; cat " + file + "; echo END-OF-OUTPUT; sleep 5"}, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(time.Second)
	if p.rc == nil {
		t.Skip("the PTY master is not a descriptor of the poller here")
	}
	c := p.Attach(80, 24, true)
	defer c.Detach()
	if err := p.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	largest := 0
	for !bytes.Contains(out.Bytes(), []byte("END-OF-OUTPUT")) {
		frames, ok := c.Next(t.Context())
		if !ok {
			t.Fatalf("the client ended before the output did (%d bytes, %d resyncs)", out.Len(), c.Resyncs())
		}
		for _, f := range frames {
			if f.Type == proto.FrameOutput {
				out.Write(f.Data)
				largest = max(largest, len(f.Data))
			}
		}
		c.Sent()
	}
	got := strings.ReplaceAll(out.String(), "\r\n", "\n")
	i := strings.Index(got, "line-0 ")
	if i < 0 || !strings.HasPrefix(got[i:], payload.String()) {
		t.Fatalf("the client's output is not the program's (%d bytes from line-0, want %d)", len(got)-max(i, 0), payload.Len())
	}
	if largest <= 8<<10 {
		t.Fatalf("largest chunk of a 2 MiB flood was %d bytes: the reader published each read on its own", largest)
	}
}
