package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// This file holds the tables of the agent event protocol (migrations 002
// and 004): agent_events, agent_runs and attention_items. The event engine
// (internal/events) is their only writer; its writer goroutine commits what
// is queued in one transaction through an EventWriter.

// EventRow is one accepted event.
type EventRow struct {
	Seq             int64
	ID              string
	SessionID       string
	SurfaceID       string
	RunID           string
	NativeSessionID string // "" is stored as NULL
	Provider        string
	Kind            string
	HookName        string
	Message         string
	OccurredAt      time.Time
	ReceivedAt      time.Time
	Source          string
	Effect          string
}

// RunRow is the reducer's persisted state of one run; Data is its JSON.
type RunRow struct {
	SessionID string
	RunID     string
	State     string
	UpdatedAt time.Time
	Data      []byte
}

// AttentionRow is one attention item; a zero ResolvedAt means open.
type AttentionRow struct {
	ID         int64
	SessionID  string
	SurfaceID  string
	RunID      string
	Provider   string
	Reason     string
	Message    string
	EventID    string
	OpenedAt   time.Time
	ResolvedAt time.Time
	Resolution string
}

// EventWriter writes the event tables, one transaction at a time.
//
// It runs its statements on the driver connection itself, prepared once,
// BEGIN and COMMIT included: through database/sql's Tx, every transaction
// parsed its BEGIN and COMMIT again and bound each statement to the
// transaction anew, which made a one-event commit cost half as much again
// as its inserts and WAL writes (BenchmarkEventCommit).
type EventWriter struct {
	db    *sql.DB
	store *Store

	mu    sync.Mutex    // dc and stmts; a transaction holds the connection, not mu
	dc    any           // the driver connection stmts were prepared on
	stmts []driver.Stmt // by eventStmt, prepared on first use
}

// eventStmt names one statement of the event writer.
type eventStmt int

const (
	stmtBegin eventStmt = iota
	stmtCommit
	stmtRollback
	stmtInsert
	stmtPutRun
	stmtDelRun
	stmtPutItem
	stmtDelItem
	stmtSetSeq
	stmtPutIDs
	numEventStmts
)

var eventSQL = [numEventStmts]string{
	stmtBegin:    `BEGIN`,
	stmtCommit:   `COMMIT`,
	stmtRollback: `ROLLBACK`,
	// The ids stored after the snapshot are checked in memory first.
	stmtInsert: `INSERT INTO agent_events(id, session_id, surface_id, run_id, native_session_id, provider, kind, hook_name, message, occurred_at, received_at, source, effect)
			SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
			WHERE NOT EXISTS (SELECT 1 FROM agent_event_ids WHERE surface_id = ? AND id = ?)`,
	stmtPutRun: `INSERT INTO agent_runs(session_id, run_id, state, updated_at, data) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT(session_id, run_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at, data = excluded.data`,
	stmtDelRun: `DELETE FROM agent_runs WHERE session_id = ? AND run_id = ?`,
	stmtPutItem: `INSERT INTO attention_items(id, session_id, surface_id, run_id, provider, reason, message, event_id, opened_at, resolved_at, resolution) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(id) DO UPDATE SET resolved_at = excluded.resolved_at, resolution = excluded.resolution`,
	stmtDelItem: `DELETE FROM attention_items WHERE id = ?`,
	stmtSetSeq: `INSERT INTO agent_state(key, value) VALUES ('snapshot_seq', (SELECT coalesce(max(seq), 0) FROM agent_events))
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
	// The events stored after the snapshot are those whose ids memory
	// holds (recentIDs), and those this transaction stored before it.
	stmtPutIDs: `INSERT INTO agent_event_ids(surface_id, id, seq)
			SELECT surface_id, id, seq FROM agent_events
			WHERE seq > (SELECT coalesce(max(value), 0) FROM agent_state WHERE key = 'snapshot_seq')
			ORDER BY surface_id, id
			ON CONFLICT DO NOTHING`,
}

// eventKey is what makes an event a duplicate: its id within its surface.
type eventKey struct{ surface, id string }

// recentIDs are the ids of the events stored after the runs snapshot,
// which agent_event_ids does not hold yet (migration 013). Every
// EventWriter of the store shares them; they are read back from
// agent_events at the first transaction.
type recentIDs struct {
	mu     sync.Mutex
	loaded bool
	seq    map[eventKey]int64
}

// load reads the ids stored after the snapshot, once. The caller holds the
// write connection, so nothing is stored meanwhile.
func (s *Store) loadRecentIDs(ctx context.Context) error {
	r := &s.recent
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.loaded {
		return nil
	}
	rows, err := s.R.QueryContext(ctx, `SELECT surface_id, id, seq FROM agent_events
		WHERE seq > (SELECT coalesce(max(value), 0) FROM agent_state WHERE key = 'snapshot_seq')`)
	if err != nil {
		return fmt.Errorf("read the ids of recent events: %w", err)
	}
	defer rows.Close()
	m := map[eventKey]int64{}
	for rows.Next() {
		var k eventKey
		var seq int64
		if err := rows.Scan(&k.surface, &k.id, &seq); err != nil {
			return fmt.Errorf("read the ids of recent events: %w", err)
		}
		m[k] = seq
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the ids of recent events: %w", err)
	}
	r.seq, r.loaded = m, true
	return nil
}

func (r *recentIDs) has(k eventKey) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.seq[k]
	return ok
}

// Unflushed returns how many stored events have ids that only the next
// snapshot (MarkSnapshot) writes to agent_event_ids; the engine snapshots
// before they grow without bound.
func (w *EventWriter) Unflushed() int {
	r := &w.store.recent
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seq)
}

// EventWriter returns the writer of the event tables. It checks that every
// statement compiles against the schema, so that a bad one fails at start
// rather than at the first event.
func (s *Store) EventWriter(ctx context.Context) (*EventWriter, error) {
	w := &EventWriter{db: s.W, store: s}
	c, err := s.W.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("prepare event statements: %w", err)
	}
	defer c.Close()
	err = c.Raw(func(dc any) error {
		for st := range numEventStmts {
			if _, err := w.stmt(ctx, dc, st); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("prepare event statements: %w", err)
	}
	return w, nil
}

// stmt returns statement st prepared on dc, the driver connection the
// caller holds. The pool may have replaced the connection since the
// statements were prepared (after a broken one); they are prepared again.
func (w *EventWriter) stmt(ctx context.Context, dc any, st eventStmt) (driver.Stmt, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dc != dc {
		// The statements of a connection the pool closed are dropped with
		// it: SQLite's close_v2 keeps it until they are finalized, which
		// is no longer possible from here, and this happens only after a
		// connection broke.
		w.dc, w.stmts = dc, make([]driver.Stmt, numEventStmts)
	}
	if s := w.stmts[st]; s != nil {
		return s, nil
	}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("the SQLite driver's connection (%T) cannot prepare statements", dc)
	}
	s, err := pc.PrepareContext(ctx, eventSQL[st])
	if err != nil {
		return nil, err
	}
	if _, ok := s.(driver.StmtExecContext); !ok {
		s.Close()
		return nil, fmt.Errorf("the SQLite driver's statement (%T) cannot execute with a context", s)
	}
	w.stmts[st] = s
	return s, nil
}

// Close finalizes the statements.
func (w *EventWriter) Close() error {
	w.mu.Lock()
	stmts := w.stmts
	w.stmts, w.dc = nil, nil
	w.mu.Unlock()
	if stmts == nil {
		return nil
	}
	c, err := w.db.Conn(context.Background())
	if err != nil {
		return err
	}
	defer c.Close()
	// On the connection, held: the driver's connection is not safe for
	// concurrent use.
	return c.Raw(func(any) error {
		var errs []error
		for _, s := range stmts {
			if s != nil {
				errs = append(errs, s.Close())
			}
		}
		return errors.Join(errs...)
	})
}

// EventTx is one write transaction on the event tables. It holds the
// store's write connection from Begin to Commit or Rollback.
type EventTx struct {
	ctx  context.Context
	c    *sql.Conn
	w    *EventWriter
	args []driver.NamedValue
	done bool
	// added are the events this transaction inserted (since its
	// snapshot, when flushed), by their seq.
	added   map[eventKey]int64
	flushed bool
}

// Begin starts a transaction.
func (w *EventWriter) Begin(ctx context.Context) (*EventTx, error) {
	c, err := w.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin event transaction: %w", err)
	}
	if err := w.store.loadRecentIDs(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("begin event transaction: %w", err)
	}
	t := &EventTx{ctx: ctx, c: c, w: w, args: make([]driver.NamedValue, 0, 15), added: map[eventKey]int64{}}
	if _, _, err := t.exec(stmtBegin); err != nil {
		c.Close()
		return nil, fmt.Errorf("begin event transaction: %w", err)
	}
	return t, nil
}

// exec runs statement st with args (reused: each call overwrites them) and
// returns, for an insert, the rows it inserted and the last rowid.
func (t *EventTx) exec(st eventStmt, args ...any) (n, rowid int64, err error) {
	if t.done {
		return 0, 0, sql.ErrTxDone
	}
	t.args = t.args[:0]
	for i, a := range args {
		t.args = append(t.args, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	err = t.c.Raw(func(dc any) error {
		s, err := t.w.stmt(t.ctx, dc, st)
		if err != nil {
			return err
		}
		res, err := s.(driver.StmtExecContext).ExecContext(t.ctx, t.args)
		if err != nil {
			return err
		}
		if st == stmtInsert {
			if n, err = res.RowsAffected(); err != nil || n == 0 {
				return err
			}
			rowid, err = res.LastInsertId()
		}
		return err
	})
	return n, rowid, err
}

// MarkSnapshot records that agent_runs and attention_items now reflect
// every stored event (run it in the transaction that writes them, before
// any event is inserted in it).
// The ids of the events stored since the last snapshot go to
// agent_event_ids with it, in one statement that reads them back from
// agent_events in key order: a statement per id cost as much again in
// binding and stepping, and random order scattered the writes over the
// primary key's pages.
func (t *EventTx) MarkSnapshot(ctx context.Context) error {
	if _, _, err := t.exec(stmtPutIDs); err != nil {
		return fmt.Errorf("mark snapshot: store event ids: %w", err)
	}
	if _, _, err := t.exec(stmtSetSeq); err != nil {
		return fmt.Errorf("mark snapshot: %w", err)
	}
	clear(t.added)
	t.flushed = true
	return nil
}

// InsertEvent appends an event unless its surface already has one with that
// id, and reports whether it did. The ids of the events stored since the
// runs snapshot are checked in memory, the others in agent_event_ids
// (migration 013).
func (t *EventTx) InsertEvent(ctx context.Context, e EventRow) (inserted bool, err error) {
	k := eventKey{e.SurfaceID, e.ID}
	if _, dup := t.added[k]; dup || t.w.store.recent.has(k) {
		return false, nil
	}
	var native any
	if e.NativeSessionID != "" {
		native = e.NativeSessionID
	}
	n, seq, err := t.exec(stmtInsert, e.ID, e.SessionID, e.SurfaceID, e.RunID, native,
		e.Provider, e.Kind, e.HookName, e.Message, e.OccurredAt.UnixNano(), e.ReceivedAt.UnixNano(), e.Source, e.Effect,
		e.SurfaceID, e.ID)
	if err != nil {
		return false, fmt.Errorf("insert event: %w", err)
	}
	if n != 1 {
		return false, nil
	}
	t.added[k] = seq
	return true, nil
}

// PutRun creates or replaces a run.
func (t *EventTx) PutRun(ctx context.Context, r RunRow) error {
	if _, _, err := t.exec(stmtPutRun, r.SessionID, r.RunID, r.State, r.UpdatedAt.UnixNano(), string(r.Data)); err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	return nil
}

// DeleteRun forgets a run.
func (t *EventTx) DeleteRun(ctx context.Context, sessionID, runID string) error {
	if _, _, err := t.exec(stmtDelRun, sessionID, runID); err != nil {
		return fmt.Errorf("delete run: %w", err)
	}
	return nil
}

// PutItem creates an attention item or records its resolution.
func (t *EventTx) PutItem(ctx context.Context, it AttentionRow) error {
	var resolved any
	if !it.ResolvedAt.IsZero() {
		resolved = it.ResolvedAt.UnixNano()
	}
	_, _, err := t.exec(stmtPutItem, it.ID, it.SessionID, it.SurfaceID, it.RunID, it.Provider, it.Reason,
		it.Message, it.EventID, it.OpenedAt.UnixNano(), resolved, it.Resolution)
	if err != nil {
		return fmt.Errorf("store attention item: %w", err)
	}
	return nil
}

// DeleteItem forgets an attention item.
func (t *EventTx) DeleteItem(ctx context.Context, id int64) error {
	if _, _, err := t.exec(stmtDelItem, id); err != nil {
		return fmt.Errorf("delete attention item: %w", err)
	}
	return nil
}

// Commit makes the transaction durable (as durable as the store's
// synchronous setting: WAL with synchronous=NORMAL survives a crash of the
// process, not necessarily a power loss) and releases the connection. A
// failed commit is rolled back: nothing of the transaction is stored.
func (t *EventTx) Commit() error {
	if t.done {
		return fmt.Errorf("commit events: %w", sql.ErrTxDone)
	}
	_, _, err := t.exec(stmtCommit)
	if err != nil {
		// A COMMIT that failed may leave the transaction open.
		_, _, rerr := t.exec(stmtRollback)
		t.release(rerr)
	} else {
		r := &t.w.store.recent
		r.mu.Lock()
		if t.flushed {
			clear(r.seq)
		}
		for k, seq := range t.added {
			r.seq[k] = seq
		}
		r.mu.Unlock()
		t.release(nil)
	}
	if err != nil {
		return fmt.Errorf("commit events: %w", err)
	}
	return nil
}

// Rollback abandons the transaction; after Commit it does nothing.
func (t *EventTx) Rollback() error {
	if t.done {
		return nil
	}
	_, _, err := t.exec(stmtRollback)
	t.release(err)
	return err
}

// release returns the connection to the pool, or, when rolling back
// failed (rollbackErr), closes it: a connection that may still be inside
// the transaction must never serve another writer.
func (t *EventTx) release(rollbackErr error) {
	t.done = true
	if rollbackErr != nil && !isNoTransaction(rollbackErr) {
		t.c.Raw(func(any) error { return driver.ErrBadConn })
	}
	t.c.Close()
}

// isNoTransaction reports whether a ROLLBACK failed only because the
// failed statement had already ended the transaction.
func isNoTransaction(err error) bool {
	return strings.Contains(err.Error(), "no transaction is active")
}

// SnapshotSeq returns the event seq that agent_runs and attention_items
// reflect (0: none).
func (s *Store) SnapshotSeq(ctx context.Context) (int64, error) {
	var v int64
	err := s.R.QueryRowContext(ctx, `SELECT value FROM agent_state WHERE key = 'snapshot_seq'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read snapshot seq: %w", err)
	}
	return v, nil
}

// EventsAfter returns the events stored after seq, in arrival order.
func (s *Store) EventsAfter(ctx context.Context, seq int64) ([]EventRow, error) {
	rows, err := s.R.QueryContext(ctx, `SELECT `+eventColumns+` FROM agent_events WHERE seq > ? ORDER BY seq`, seq)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	out, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}

// LoadRuns returns every persisted run.
func (s *Store) LoadRuns(ctx context.Context) ([]RunRow, error) {
	rows, err := s.R.QueryContext(ctx, `SELECT session_id, run_id, state, updated_at, data FROM agent_runs`)
	if err != nil {
		return nil, fmt.Errorf("load runs: %w", err)
	}
	defer rows.Close()
	var out []RunRow
	for rows.Next() {
		var r RunRow
		var upd int64
		var data string
		if err := rows.Scan(&r.SessionID, &r.RunID, &r.State, &upd, &data); err != nil {
			return nil, fmt.Errorf("load runs: %w", err)
		}
		r.UpdatedAt, r.Data = time.Unix(0, upd).UTC(), []byte(data)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load runs: %w", err)
	}
	return out, nil
}

// LoadAttention returns every persisted attention item.
func (s *Store) LoadAttention(ctx context.Context) ([]AttentionRow, error) {
	rows, err := s.R.QueryContext(ctx, `SELECT id, session_id, surface_id, run_id, provider, reason, message, event_id, opened_at, resolved_at, resolution FROM attention_items ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("load attention items: %w", err)
	}
	defer rows.Close()
	var out []AttentionRow
	for rows.Next() {
		var it AttentionRow
		var opened int64
		var resolved sql.NullInt64
		if err := rows.Scan(&it.ID, &it.SessionID, &it.SurfaceID, &it.RunID, &it.Provider, &it.Reason, &it.Message,
			&it.EventID, &opened, &resolved, &it.Resolution); err != nil {
			return nil, fmt.Errorf("load attention items: %w", err)
		}
		it.OpenedAt = time.Unix(0, opened).UTC()
		if resolved.Valid {
			it.ResolvedAt = time.Unix(0, resolved.Int64).UTC()
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load attention items: %w", err)
	}
	return out, nil
}

const eventColumns = `seq, id, session_id, surface_id, run_id, native_session_id, provider, kind, hook_name, message, occurred_at, received_at, source, effect`

func scanEvents(rows *sql.Rows) ([]EventRow, error) {
	defer rows.Close()
	var out []EventRow
	for rows.Next() {
		var e EventRow
		var native sql.NullString
		var occ, rec int64
		if err := rows.Scan(&e.Seq, &e.ID, &e.SessionID, &e.SurfaceID, &e.RunID, &native, &e.Provider, &e.Kind,
			&e.HookName, &e.Message, &occ, &rec, &e.Source, &e.Effect); err != nil {
			return nil, err
		}
		e.NativeSessionID = native.String
		e.OccurredAt, e.ReceivedAt = time.Unix(0, occ).UTC(), time.Unix(0, rec).UTC()
		out = append(out, e)
	}
	return out, rows.Err()
}

// SessionEvents returns the newest limit events of a Muster session, oldest
// first.
func (s *Store) SessionEvents(ctx context.Context, sessionID string, limit int) ([]EventRow, error) {
	rows, err := s.R.QueryContext(ctx, `SELECT * FROM (SELECT `+eventColumns+` FROM agent_events
		WHERE session_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`, sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("read session events: %w", err)
	}
	out, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("read session events: %w", err)
	}
	return out, nil
}

// Events returns every stored event in arrival order (tests, export).
func (s *Store) Events(ctx context.Context) ([]EventRow, error) {
	rows, err := s.R.QueryContext(ctx, `SELECT `+eventColumns+` FROM agent_events ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	out, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}

// PruneEvents deletes the events stored before the first one received at
// or after the cutoff (events are stored in arrival order, so this reads
// only the rows it deletes). Their ids go with them. It returns how many
// events it deleted.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	var keep int64
	err := s.W.QueryRowContext(ctx, `SELECT seq FROM agent_events WHERE received_at >= ? ORDER BY seq LIMIT 1`, before.UnixNano()).Scan(&keep)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.W.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM agent_events`).Scan(&keep)
	}
	if err != nil {
		return 0, fmt.Errorf("prune events: %w", err)
	}
	res, err := s.W.ExecContext(ctx, `DELETE FROM agent_events WHERE seq < ?`, keep)
	if err != nil {
		return 0, fmt.Errorf("prune events: %w", err)
	}
	if _, err := s.W.ExecContext(ctx, `DELETE FROM agent_event_ids WHERE seq < ?`, keep); err != nil {
		return 0, fmt.Errorf("prune event ids: %w", err)
	}
	s.recent.mu.Lock()
	for k, seq := range s.recent.seq {
		if seq < keep {
			delete(s.recent.seq, k)
		}
	}
	s.recent.mu.Unlock()
	return res.RowsAffected()
}
