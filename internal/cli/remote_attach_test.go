package cli

import (
	"context"
	"io"
	"os"
	"testing"
	"time"
)

// TestLinkWatchTellsAFloodFromSilence: a probe that does not come back in
// time means a silent link only when the master read (almost) nothing
// meanwhile; on a slow link under a flood the probe queues behind output
// the master keeps reading, and the attach must not be torn down. The
// read count is this process's own, from /proc, moved by a real read.
func TestLinkWatchTellsAFloodFromSilence(t *testing.T) {
	if _, err := os.Stat("/proc/self/io"); err != nil {
		t.Skip("needs /proc/PID/io")
	}
	late := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	// flooding reads 1 MiB through a pipe while the probe waits.
	flooding := func(ctx context.Context) error {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		go func() { w.Write(make([]byte, 1<<20)); w.Close() }()
		io.Copy(io.Discard, r)
		r.Close()
		return late(ctx)
	}
	reads := masterReads(os.Getpid())
	for _, tt := range []struct {
		name   string
		probe  func(context.Context) error
		reads  func() (uint64, bool)
		silent bool
	}{
		{"answered", func(context.Context) error { return nil }, reads, false},
		{"late and idle", late, reads, true},
		{"late under a flood", flooding, reads, false},
		{"late, reads unknown", flooding, masterReads(0), true},
	} {
		w := linkWatch{probe: tt.probe, received: tt.reads, timeout: 50 * time.Millisecond}
		if got := w.silent(t.Context()); got != tt.silent {
			t.Errorf("%s: silent = %v, want %v", tt.name, got, tt.silent)
		}
	}
}
