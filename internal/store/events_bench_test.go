package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
)

// benchEventWriter is the event writer of a new store, closed with b.
func benchEventWriter(b *testing.B) *EventWriter {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	w, err := s.EventWriter(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	return w
}

// BenchmarkEventCommit is the event engine's commit: a transaction of a
// few new events (random ids, as the hook helper's) over eight surfaces.
func BenchmarkEventCommit(b *testing.B) {
	for _, batch := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("events=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			w := benchEventWriter(b)
			now := time.Now()
			i := 0
			for b.Loop() {
				tx, err := w.Begin(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for range batch {
					i++
					ev := EventRow{ID: uuid.NewString(), SessionID: "s", SurfaceID: fmt.Sprintf("sf%d", i%8), RunID: "r",
						Provider: "claude", Kind: "running", HookName: "PostToolUse", OccurredAt: now, ReceivedAt: now,
						Source: "hook", Effect: "applied"}
					if _, err := tx.InsertEvent(ctx, ev); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/event")
		})
	}
}

// BenchmarkMarkSnapshot is the snapshot that the event engine forces
// after 4,096 stored events: their ids go to agent_event_ids, over a table
// that already holds some.
func BenchmarkMarkSnapshot(b *testing.B) {
	const perSnapshot = 4096
	ctx := context.Background()
	w := benchEventWriter(b)
	now := time.Now()
	i := 0
	store := func(n int, snap bool) time.Duration {
		tx, err := w.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var took time.Duration
		if snap {
			start := time.Now()
			if err := tx.MarkSnapshot(ctx); err != nil {
				b.Fatal(err)
			}
			took = time.Since(start)
		}
		for range n {
			i++
			ev := EventRow{ID: uuid.NewString(), SessionID: "s", SurfaceID: fmt.Sprintf("sf%d", i%8), RunID: "r",
				Provider: "claude", Kind: "running", HookName: "PostToolUse", OccurredAt: now, ReceivedAt: now,
				Source: "hook", Effect: "applied"}
			if _, err := tx.InsertEvent(ctx, ev); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		return took
	}
	for range 4 {
		store(perSnapshot, true)
	}
	var snap time.Duration
	for b.Loop() {
		b.StopTimer()
		store(perSnapshot, false)
		b.StartTimer()
		snap += store(0, true)
	}
	b.ReportMetric(float64(snap.Nanoseconds())/float64(b.N*perSnapshot), "ns/id")
}
