package pane

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// TestDirectWritesKeepTheStreamIntact attaches a client whose direct writer
// often manages only part of a frame, as a full socket would, and checks
// that the bytes on the "wire" still decode to the program's exact output.
func TestDirectWritesKeepTheStreamIntact(t *testing.T) {
	// Take the direct path for bulk output too, to exercise partial writes.
	defer func(old int) { maxDirect = old }(maxDirect)
	maxDirect = 1 << 20
	p, err := Start(Config{Argv: []string{"sh", "-c", "sleep 0.3; i=0; while [ $i -lt 2000 ]; do echo line-$i; i=$((i+1)); done; echo END-OF-OUTPUT; sleep 5"}, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(time.Second)
	c := p.Attach(80, 24, true)
	defer c.Detach()

	var wire bytes.Buffer
	var mu sync.Mutex
	calls := 0
	c.SetDirect(func(b []byte) []byte {
		mu.Lock()
		defer mu.Unlock()
		calls++
		n := len(b)
		switch calls % 3 {
		case 1:
			n = len(b) / 2 // a half-written frame
		case 2:
			n = 0 // a full socket
		}
		wire.Write(b[:n])
		return b[n:]
	}, true)
	deadline := time.Now().Add(20 * time.Second)
	var out bytes.Buffer
	for !strings.Contains(out.String(), "END-OF-OUTPUT") {
		if time.Now().After(deadline) {
			t.Fatalf("never saw the end of the output")
		}
		// Direct writes reach the wire without Next returning, so poll.
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		frames, _ := c.Next(ctx)
		cancel()
		mu.Lock()
		for _, f := range frames {
			if f.Type == FrameRaw {
				wire.Write(f.Data)
			} else {
				proto.WriteFrame(&wire, f.Type, f.Data)
			}
		}
		// Decode whatever complete frames the wire holds so far.
		for {
			snapshot := wire.Bytes()
			typ, data, err := proto.ReadFrame(bytes.NewReader(snapshot), nil)
			if err != nil {
				break
			}
			wire.Next(5 + len(data))
			if typ == proto.FrameOutput {
				out.Write(data)
			}
		}
		mu.Unlock()
		c.Sent()
	}
	if calls == 0 {
		t.Fatal("the direct path was never taken")
	}
	lines := strings.Split(strings.ReplaceAll(out.String(), "\r\n", "\n"), "\n")
	next := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "line-") {
			if l != "line-"+itoa(next) {
				t.Fatalf("stream out of order or corrupt at %q, want line-%d", l, next)
			}
			next++
		}
	}
	if next != 2000 {
		t.Fatalf("saw %d lines, want 2000", next)
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	if i == 0 {
		return "0"
	}
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}
