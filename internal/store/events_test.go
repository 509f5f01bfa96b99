package store

import (
	"path/filepath"
	"strings"
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
	if ins, err := tx.InsertEvent(ctx, ev); err != nil || !ins {
		t.Fatalf("InsertEvent = %v, %v", ins, err)
	}
	for _, err := range []error{tx.PutRun(ctx, run), tx.PutItem(ctx, item)} {
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
	if _, err := tx.InsertEvent(ctx, ev2); err != nil {
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
			if _, err := tx.InsertEvent(ctx, EventRow{ID: id, SessionID: "s", SurfaceID: "f", RunID: "r", Provider: "p", Kind: "started", OccurredAt: at, ReceivedAt: at, Source: "hook", Effect: "applied"}); err != nil {
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

// TestEventIDsAreUniquePerSurface: a known id of the same surface is not
// inserted again, in the same transaction or a later one, while another
// surface may use the same id; pruning frees the ids it deletes.
func TestEventIDsAreUniquePerSurface(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, _ := s.EventWriter(ctx)
	defer w.Close()
	day := func(d int) time.Time { return time.Unix(int64(d)*86400+60, 0) }
	insert := func(id, surface string, at time.Time) bool {
		t.Helper()
		tx, _ := w.Begin(ctx)
		ins, err := tx.InsertEvent(ctx, EventRow{ID: id, SessionID: "s", SurfaceID: surface, RunID: "r", Provider: "p", Kind: "started", OccurredAt: at, ReceivedAt: at, Source: "hook", Effect: "applied"})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		return ins
	}
	tests := []struct {
		id, surface string
		at          int
		want        bool
	}{
		{"old", "f", 10, true},
		{"a", "f", 20, true},
		{"a", "f", 20, false},
		{"a", "g", 20, true},
		{"old", "f", 20, false},
	}
	for _, tt := range tests {
		if got := insert(tt.id, tt.surface, day(tt.at)); got != tt.want {
			t.Errorf("insert %s on %s: inserted=%v, want %v", tt.id, tt.surface, got, tt.want)
		}
	}
	tx, _ := w.Begin(ctx)
	var got []bool
	for _, id := range []string{"b", "b", "a"} {
		ins, err := tx.InsertEvent(ctx, EventRow{ID: id, SessionID: "s", SurfaceID: "f", RunID: "r", Provider: "p", Kind: "started", OccurredAt: day(21), ReceivedAt: day(21), Source: "hook", Effect: "applied"})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ins)
	}
	tx.Commit()
	if diff := cmp.Diff([]bool{true, false, false}, got); diff != "" {
		t.Errorf("one transaction (-want +got):\n%s", diff)
	}
	// Pruning drops day 10's event, and with it its id.
	if n, err := s.PruneEvents(ctx, day(15)); err != nil || n != 1 {
		t.Fatalf("PruneEvents = %d, %v", n, err)
	}
	if !insert("old", "f", day(22)) {
		t.Error("a pruned id is still refused")
	}
}

// TestMigrationFromFingerprints: a database written by the engine that kept
// fingerprints keeps its events, drops the fingerprints, and declares its
// snapshot current.
func TestMigrationFromFingerprints(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// Back to the schema of migration 003, with two events after the snapshot.
	for _, q := range []string{
		`DROP TABLE agent_event_ids`,
		`ALTER TABLE agent_events ADD COLUMN fp INTEGER NOT NULL DEFAULT 0`,
		`CREATE TABLE agent_event_fps (day INTEGER NOT NULL, data BLOB NOT NULL)`,
		`INSERT INTO agent_events(id, fp, session_id, surface_id, run_id, provider, kind, occurred_at, received_at, source, effect) VALUES
			('a', 1, 's', 'f', 'r', 'p', 'started', 1, 1, 'hook', 'applied'), ('b', 2, 's', 'f', 'r', 'p', 'running', 2, 2, 'hook', 'confirmed')`,
		`UPDATE agent_state SET value = 0 WHERE key = 'snapshot_seq'`,
		`DELETE FROM schema_migrations WHERE version IN (4, 13)`,
	} {
		if _, err := s.W.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if seq, err := s.SnapshotSeq(ctx); err != nil || seq != 2 {
		t.Errorf("snapshot seq after the migration = %d, %v", seq, err)
	}
	if evs, err := s.Events(ctx); err != nil || len(evs) != 2 {
		t.Errorf("events after the migration: %d, %v", len(evs), err)
	}
	var n int
	if err := s.R.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'agent_event_fps'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("agent_event_fps still there: %d, %v", n, err)
	}
}

// failOn makes SQLite fail the commit of a transaction that inserted an
// event with hook name "fail-commit" (a deferred foreign key the row
// violates) and fail the insert of one named "fail-insert".
func failOn(t *testing.T, s *Store) {
	t.Helper()
	for _, q := range []string{
		`CREATE TABLE test_parent (id INTEGER PRIMARY KEY)`,
		`CREATE TABLE test_child (parent INTEGER REFERENCES test_parent(id) DEFERRABLE INITIALLY DEFERRED)`,
		`CREATE TRIGGER test_fail_commit AFTER INSERT ON agent_events WHEN NEW.hook_name = 'fail-commit'
			BEGIN INSERT INTO test_child(parent) VALUES (42); END`,
		`CREATE TRIGGER test_fail_insert BEFORE INSERT ON agent_events WHEN NEW.hook_name = 'fail-insert'
			BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
	} {
		if _, err := s.W.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// A transaction that failed, at an insert or at the commit, stores
// nothing and leaves the write connection outside any transaction: the
// next writer's work is its own.
func TestFailedEventTxStoresNothing(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	failOn(t, s)
	w, err := s.EventWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ev := func(id, hook string) EventRow {
		return EventRow{ID: id, SessionID: "s", SurfaceID: "sf", RunID: "r", Provider: "claude", Kind: "running",
			HookName: hook, OccurredAt: time.Unix(1, 0), ReceivedAt: time.Unix(1, 0), Source: "hook", Effect: "applied"}
	}

	tx, err := w.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.InsertEvent(ctx, ev("a", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.InsertEvent(ctx, ev("b", "fail-insert")); err == nil || !strings.Contains(err.Error(), "refused by the test") {
		t.Fatalf("insert: %v, want the trigger's refusal", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	tx, err = w.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.InsertEvent(ctx, ev("c", "fail-commit")); err != nil {
		t.Fatal(err)
	}
	err = tx.Commit()
	if err == nil || !strings.Contains(err.Error(), "commit events") || !strings.Contains(err.Error(), "FOREIGN KEY") {
		t.Fatalf("commit: %v, want a foreign key failure", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatalf("rollback after a failed commit: %v", err)
	}

	// Autocommit on the same connection: it would be lost with a
	// transaction left open.
	if _, err := s.W.Exec(`INSERT INTO agent_state(key, value) VALUES ('test', 1)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.R.QueryRow(`SELECT count(*) FROM agent_state WHERE key = 'test'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("a later autocommit write: %d rows, %v", n, err)
	}
	evs, err := s.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 0 {
		t.Fatalf("stored %d events of failed transactions: %+v", len(evs), evs)
	}

	tx, err = w.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ins, err := tx.InsertEvent(ctx, ev("a", "")); err != nil || !ins {
		t.Fatalf("insert after the failures: %v %v", ins, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if evs, _ := s.Events(ctx); len(evs) != 1 || evs[0].ID != "a" {
		t.Fatalf("stored %+v, want event a alone", evs)
	}
}

// TestMigrationToEventIDTable: a database of migration 012 (idempotency by
// a unique index) keeps refusing the ids it stored, those before its runs
// snapshot through agent_event_ids and those after through the writer's
// memory; and no event commit writes the index any more.
func TestMigrationToEventIDTable(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE agent_event_ids`,
		`CREATE UNIQUE INDEX agent_events_surface_id ON agent_events(surface_id, id)`,
		`INSERT INTO agent_events(id, session_id, surface_id, run_id, provider, kind, occurred_at, received_at, source, effect) VALUES
			('a', 's', 'f', 'r', 'p', 'started', 1, 1, 'hook', 'applied'), ('b', 's', 'f', 'r', 'p', 'running', 2, 2, 'hook', 'applied')`,
		`INSERT INTO agent_state(key, value) VALUES ('snapshot_seq', 1) ON CONFLICT(key) DO UPDATE SET value = 1`,
		`DELETE FROM schema_migrations WHERE version = 13`,
	} {
		if _, err := s.W.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.R.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'agent_events'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("agent_events still has %d indexes (%v)", n, err)
	}
	w, err := s.EventWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tx, err := w.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	for _, id := range []string{"a", "b", "c"} {
		ins, err := tx.InsertEvent(ctx, EventRow{ID: id, SessionID: "s", SurfaceID: "f", RunID: "r", Provider: "p", Kind: "running",
			OccurredAt: time.Unix(3, 0), ReceivedAt: time.Unix(3, 0), Source: "hook", Effect: "applied"})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ins)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]bool{false, false, true}, got); diff != "" {
		t.Errorf("inserted a, b, c (-want +got):\n%s", diff)
	}
}

// TestEventIDsSurviveSnapshotsAndRestarts: an id is refused whether its
// event was stored before the last snapshot (agent_event_ids) or after it
// (memory, read back from agent_events by the next store), and a failed
// snapshot loses none.
func TestEventIDsSurviveSnapshotsAndRestarts(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.EventWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ev := func(id string) EventRow {
		return EventRow{ID: id, SessionID: "s", SurfaceID: "f", RunID: "r", Provider: "p", Kind: "running",
			OccurredAt: time.Unix(3, 0), ReceivedAt: time.Unix(3, 0), Source: "hook", Effect: "applied"}
	}
	// insert stores ids in one transaction, after a snapshot when snap,
	// and reports which were new.
	insert := func(w *EventWriter, snap, rollback bool, ids ...string) []bool {
		t.Helper()
		tx, err := w.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if snap {
			if err := tx.MarkSnapshot(ctx); err != nil {
				t.Fatal(err)
			}
		}
		var got []bool
		for _, id := range ids {
			ins, err := tx.InsertEvent(ctx, ev(id))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ins)
		}
		if rollback {
			err = tx.Rollback()
		} else {
			err = tx.Commit()
		}
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	check := func(what string, got []bool, want ...bool) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	check("before any snapshot", insert(w, false, false, "a", "b"), true, true)
	check("a snapshot rolled back", insert(w, true, true, "c"), true)
	check("after the rolled-back snapshot", insert(w, false, false, "a", "c"), false, true)
	check("with a snapshot", insert(w, true, false, "d", "a", "d"), true, false, false)
	check("after the snapshot", insert(w, false, false, "a", "b", "c", "d", "e"), false, false, false, false, true)
	var stored int
	if err := s.R.QueryRowContext(ctx, `SELECT count(*) FROM agent_event_ids`).Scan(&stored); err != nil || stored != 3 {
		t.Errorf("agent_event_ids holds %d ids (%v), want a, b and c", stored, err)
	}
	w.Close()
	s.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err = s.EventWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	check("after a restart", insert(w, false, false, "a", "d", "e", "f"), false, false, false, true)
	check("after a restart and a snapshot", insert(w, true, false, "a", "d", "e", "f", "g"), false, false, false, false, true)
}
