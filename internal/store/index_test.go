package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func tableCount(t *testing.T, s *Store, like string) int {
	t.Helper()
	var n int
	if err := s.R.QueryRowContext(t.Context(), `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name LIKE ?`, like).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIndexApartFromEvents: the history index is a database of its own,
// so a write transaction on it (a large session's full-text row takes
// milliseconds) never holds the connection an agent event commits on
// (issue 22: event acks during a re-index). Before, the index's tables
// were in the main database and written through its one write
// connection: the event commit below waited for the index's transaction.
func TestIndexApartFromEvents(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	main, err := Open(ctx, filepath.Join(dir, "muster.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer main.Close()
	idx, err := OpenIndex(ctx, filepath.Join(dir, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if n := tableCount(t, main, "history%"); n != 0 {
		t.Errorf("the main database has %d history tables", n)
	}
	if n := tableCount(t, idx, "history_fts"); n != 1 {
		t.Errorf("the index has %d history_fts tables, want 1", n)
	}
	if n := tableCount(t, idx, "sessions") + tableCount(t, idx, "agent_events"); n != 0 {
		t.Errorf("the index has %d of the main database's tables", n)
	}

	w, err := main.EventWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	held, err := idx.W.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Rollback()
	if _, err := held.ExecContext(ctx, `INSERT INTO history_fts(rowid, meta, said, tools) VALUES (1, 'm', ?, '')`, strings.Repeat("word ", 50_000)); err != nil {
		t.Fatal(err)
	}
	committed := make(chan error, 1)
	go func() {
		tx, err := w.Begin(ctx)
		if err != nil {
			committed <- err
			return
		}
		now := time.Now()
		if _, err := tx.InsertEvent(ctx, EventRow{ID: "e1", SessionID: "s", SurfaceID: "f", RunID: "r", Provider: "p", Kind: "started",
			OccurredAt: now, ReceivedAt: now, Source: "hook", Effect: "applied"}); err != nil {
			tx.Rollback()
			committed <- err
			return
		}
		committed <- tx.Commit()
	}()
	select {
	case err := <-committed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("an event commit waited for the history index's write transaction")
	}
}

// TestMigrationMovesHistoryOut: a main database of schema 13 held the
// history index; migration 014 drops it (the index is rebuilt from the
// transcripts in its own file) and the file is compacted, keeping every
// other table's rows.
func TestMigrationMovesHistoryOut(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "muster.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	old := &Store{W: db, R: db, Path: path, schema: mainSchema}
	if err := old.migrateTo(ctx, 13); err != nil {
		t.Fatal(err)
	}
	write(t, old, "kept")
	said := strings.Repeat("the parser reads every provider incrementally ", 1500)
	for i := range 200 {
		p := fmt.Sprintf("/t/%d.jsonl", i)
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO history_files(path, provider, size, mtime_ns) VALUES (?, 'claude', 1, 1)`, []any{p}},
			{`INSERT INTO history_sessions(rowid, path, ord, provider, native_id, summary) VALUES (?, ?, 0, 'claude', ?, '{}')`, []any{i + 1, p, p}},
			{`INSERT INTO history_fts(rowid, meta, said, tools) VALUES (?, 'm', ?, '')`, []any{i + 1, fmt.Sprint(i, said)}},
			{`INSERT INTO history_analyses(session, version, brief) VALUES (?, 1, ?)`, []any{i + 1, []byte(said)}},
		} {
			if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
		}
	}
	var before int64
	if err := db.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := tableCount(t, s, "history%"); n != 0 {
		t.Errorf("%d history tables are left in the main database", n)
	}
	var after, free int64
	if err := s.R.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if err := s.R.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
		t.Fatal(err)
	}
	if after*4 > before || free != 0 {
		t.Errorf("the database has %d pages (%d free) after the index moved out, %d before: not compacted", after, free, before)
	}
	if _, err := s.SessionByID(ctx, "kept"); err != nil {
		t.Errorf("a session did not survive the migration: %v", err)
	}
}

// TestCorruptIndexMovedAside: a corrupt history index is moved aside like
// the main database, with a notice that says it is rebuilt, and a new one
// is created.
func TestCorruptIndexMovedAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 20)), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenIndex(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.Recovered
	if r == nil {
		t.Fatal("a corrupt index was opened without a word")
	}
	if n := r.Notice(); !strings.Contains(n, "history index was corrupt") || !strings.Contains(n, r.Backup) || !strings.Contains(n, "rebuilt") {
		t.Errorf("notice %q", n)
	}
	if _, err := os.Stat(r.Backup); err != nil {
		t.Errorf("backup: %v", err)
	}
	if n := tableCount(t, s, "history_files"); n != 1 {
		t.Errorf("the new index has %d history_files tables", n)
	}
}
