package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEventTablesRoundTrip(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := s.EventWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	at := time.Date(2026, 7, 16, 7, 0, 0, 123456789, time.UTC)
	ev := EventRow{ID: "e1", SessionID: "s1", SurfaceID: "f1", RunID: "r1", Provider: "claude", Kind: "started",
		HookName: "SessionStart", Message: "hi", OccurredAt: at, ReceivedAt: at.Add(time.Millisecond), Source: "hook", Effect: "applied"}
	run := RunRow{SessionID: "s1", RunID: "r1", State: "running", UpdatedAt: at, Data: []byte(`{"x":1}`)}
	item := AttentionRow{ID: 7, SessionID: "s1", SurfaceID: "f1", RunID: "r1", Provider: "claude", Reason: "failed", EventID: "e1", OpenedAt: at}

	tx, err := w.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{tx.InsertEvent(ctx, ev), tx.PutRun(ctx, run), tx.PutItem(ctx, item)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	// A rolled-back transaction leaves nothing.
	tx, err = w.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ev2 := ev
	ev2.ID = "e2"
	if err := tx.InsertEvent(ctx, ev2); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()

	evs, err := s.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ev.Seq = 1
	if diff := cmp.Diff([]EventRow{ev}, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	runs, err := s.LoadRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]RunRow{run}, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}

	// Resolution updates the item; run upsert replaces; deletes forget.
	tx, _ = w.Begin(ctx)
	item.ResolvedAt, item.Resolution = at.Add(time.Hour), "acknowledged"
	run.State = "succeeded"
	if err := tx.PutItem(ctx, item); err != nil {
		t.Fatal(err)
	}
	if err := tx.PutRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	items, err := s.LoadAttention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]AttentionRow{item}, items); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if runs, _ := s.LoadRuns(ctx); len(runs) != 1 || runs[0].State != "succeeded" {
		t.Errorf("runs after upsert = %+v", runs)
	}
	got, err := s.SessionEvents(ctx, "s1", 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("SessionEvents = %v, %v", got, err)
	}
	tx, _ = w.Begin(ctx)
	if err := tx.DeleteRun(ctx, "s1", "r1"); err != nil {
		t.Fatal(err)
	}
	if err := tx.DeleteItem(ctx, 7); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	if runs, _ := s.LoadRuns(ctx); len(runs) != 0 {
		t.Errorf("run not deleted")
	}
	if items, _ := s.LoadAttention(ctx); len(items) != 0 {
		t.Errorf("item not deleted")
	}
	fps, err := s.Fingerprints(ctx)
	if err != nil || len(fps) != 1 || fps[0] != Fingerprint("e1") || Fingerprint("e1") == Fingerprint("e2") {
		t.Fatalf("Fingerprints = %x, %v", fps, err)
	}
	if n, err := s.PruneEvents(ctx, at.Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("PruneEvents = %d, %v", n, err)
	}
}

func TestSnapshotSeq(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, _ := s.EventWriter(ctx)
	defer w.Close()
	if seq, err := s.SnapshotSeq(ctx); err != nil || seq != 0 {
		t.Fatalf("empty store: %d, %v", seq, err)
	}
	at := time.Unix(1, 0)
	insert := func(ids ...string) {
		tx, _ := w.Begin(ctx)
		for _, id := range ids {
			if err := tx.InsertEvent(ctx, EventRow{ID: id, SessionID: "s", SurfaceID: "f", RunID: "r", Provider: "p", Kind: "started", OccurredAt: at, ReceivedAt: at, Source: "hook", Effect: "applied"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	insert("a", "b")
	tx, _ := w.Begin(ctx)
	if err := tx.MarkSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	insert("c")
	seq, err := s.SnapshotSeq(ctx)
	if err != nil || seq != 2 {
		t.Fatalf("snapshot seq = %d, %v", seq, err)
	}
	after, err := s.EventsAfter(ctx, seq)
	if err != nil || len(after) != 1 || after[0].ID != "c" {
		t.Fatalf("EventsAfter = %+v, %v", after, err)
	}
}

func TestFingerprintsAcrossSnapshots(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, _ := s.EventWriter(ctx)
	defer w.Close()
	day := func(d int) time.Time { return time.Unix(int64(d)*86400+60, 0) }
	insert := func(id string, at time.Time) {
		tx, _ := w.Begin(ctx)
		if err := tx.InsertEvent(ctx, EventRow{ID: id, SessionID: "s", SurfaceID: "f", RunID: "r", Provider: "p", Kind: "started", OccurredAt: at, ReceivedAt: at, Source: "hook", Effect: "applied"}); err != nil {
			t.Fatal(err)
		}
		tx.Commit()
	}
	insert("old", day(10))
	insert("a", day(20))
	tx, _ := w.Begin(ctx)
	tx.SaveFingerprints(ctx, 10, []uint64{Fingerprint("old")})
	tx.SaveFingerprints(ctx, 20, []uint64{Fingerprint("a")})
	tx.MarkSnapshot(ctx)
	tx.Commit()
	insert("b", day(20)) // after the snapshot: read from agent_events
	want := map[uint64]bool{Fingerprint("old"): true, Fingerprint("a"): true, Fingerprint("b"): true}
	got, err := s.Fingerprints(ctx)
	if err != nil || len(got) != 3 {
		t.Fatalf("Fingerprints = %x, %v", got, err)
	}
	for _, fp := range got {
		if !want[fp] {
			t.Fatalf("unexpected fingerprint %x", fp)
		}
	}
	// Pruning drops day 10's events and fingerprints, and reads no further.
	if n, err := s.PruneEvents(ctx, day(15)); err != nil || n != 1 {
		t.Fatalf("PruneEvents = %d, %v", n, err)
	}
	got, _ = s.Fingerprints(ctx)
	if len(got) != 2 {
		t.Fatalf("after pruning: %x", got)
	}
	if n, err := s.PruneEvents(ctx, day(30)); err != nil || n != 2 {
		t.Fatalf("PruneEvents all = %d, %v", n, err)
	}
}
