// Package store owns Muster's durable state: SQLite databases (pure Go,
// modernc.org/sqlite) in WAL mode with versioned migrations. All writes to
// one database go through a single connection; reads use a separate pool.
//
// There are two databases. The main one (Open: sessions, surfaces, agent
// events, attention, worktrees) is what the daemon cannot lose. The
// history index (OpenIndex: transcript summaries, full-text search,
// analyses; internal/history) is derived from the transcripts on disk and
// lives in a file of its own, with its own write connection, so that
// indexing a large transcript never delays an agent event's commit.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql index_migrations/*.sql
var migrationFS embed.FS

// schema is one kind of database: its migrations and what Open reads to
// find a corrupt one at once.
type schema struct {
	what   string // names it to the user
	dir    string // its migrations in migrationFS
	probes []string
}

var (
	mainSchema = &schema{
		what: "database", dir: "migrations",
		// What the daemon reads first: one row per session.
		probes: []string{`SELECT count(*) FROM sessions`, `SELECT count(*) FROM surfaces`},
	}
	indexSchema = &schema{
		what: "history index", dir: "index_migrations",
		// One row per transcript file: cheap, and read by every refresh.
		probes: []string{`SELECT count(*) FROM history_files`},
	}
)

// Store is an open database.
type Store struct {
	// W is the only connection that writes: SQLite allows one writer, and a
	// pool of one makes Go queue writers instead of SQLite returning BUSY.
	W *sql.DB
	// R serves reads concurrently with the writer (WAL).
	R *sql.DB
	// Path is the database file.
	Path string
	// Recovered is set when Open found the database corrupt and moved it
	// aside to start a new one.
	Recovered *Recovery
	// ReadOnly is set by OpenReadOnly: nothing may be written.
	ReadOnly bool

	schema *schema

	recent recentIDs // of the event writers (events.go)
}

// Recovery is a corrupt database Open moved aside.
type Recovery struct {
	Why    string // what was wrong with it
	Backup string // where it is now
	What   string // "database" or "history index"
}

// Notice is the one line that tells the user.
func (r *Recovery) Notice() string {
	if r.What == indexSchema.what {
		return fmt.Sprintf("the history index was corrupt (%s): moved it to %s; it is rebuilt from the transcripts", r.Why, r.Backup)
	}
	return fmt.Sprintf("the database was corrupt (%s): moved it to %s and started a new one", r.Why, r.Backup)
}

// Open opens (creating if needed) the database at path and applies every
// pending migration. The database and its -wal/-shm files are readable by
// the owner only (0600), tightened when an existing one is looser. A
// database that is corrupt (empty, truncated, not SQLite, or malformed in
// what is read at open) is never silently replaced: it is moved aside
// (Store.Recovered names the backup) and a new one created. A path that is
// not a regular file is an error.
func Open(ctx context.Context, dbPath string) (*Store, error) {
	return openSchema(ctx, dbPath, mainSchema)
}

// OpenIndex opens (creating if needed) the history index at path, as Open
// does the main database: a corrupt one is moved aside and a new, empty
// one created, which the next refresh fills from the transcripts.
func OpenIndex(ctx context.Context, dbPath string) (*Store, error) {
	return openSchema(ctx, dbPath, indexSchema)
}

func openSchema(ctx context.Context, dbPath string, sc *schema) (*Store, error) {
	unlock, err := lockOpen(dbPath)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dbPath, err)
	}
	defer unlock()
	var rec *Recovery
	if err := checkFile(dbPath); err != nil {
		ce, ok := errors.AsType[*CorruptError](err)
		if !ok {
			return nil, fmt.Errorf("open store: %w", err)
		}
		backup, err := moveAside(dbPath, time.Now())
		if err != nil {
			return nil, fmt.Errorf("open store: %s, and %w", ce.Why, err)
		}
		rec = &Recovery{Why: ce.Why, Backup: backup, What: sc.what}
	}
	s, err := open(ctx, dbPath, sc)
	if err != nil && rec == nil && isCorrupt(err) {
		backup, merr := moveAside(dbPath, time.Now())
		if merr != nil {
			return nil, fmt.Errorf("%w, and %w", err, merr)
		}
		rec = &Recovery{Why: errors.Unwrap(err).Error(), Backup: backup, What: sc.what}
		s, err = open(ctx, dbPath, sc)
	}
	if err != nil {
		return nil, err
	}
	s.Recovered = rec
	return s, nil
}

// lockOpen takes the lock that makes opening dbPath one process's work
// at a time: the daemon's history watcher and a `muster history` started
// with it both create history.db, and two connections turning a new file
// to WAL together fail with "disk I/O error" (SQLITE_IOERR_DELETE_NOENT),
// or run a migration twice. Only the open (moving aside, migrating,
// probing) holds it; the stores then share the file as SQLite does.
func lockOpen(dbPath string) (func(), error) {
	f, err := os.OpenFile(dbPath+".lock", os.O_CREATE|os.O_RDWR, fileMode)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock: %w", err)
	}
	return func() { f.Close() }, nil
}

func open(ctx context.Context, dbPath string, sc *schema) (*Store, error) {
	if err := secureFiles(dbPath); err != nil {
		return nil, fmt.Errorf("open store %s: %w", dbPath, err)
	}
	dsn := func(extra string) string {
		q := url.Values{}
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "foreign_keys(1)")
		// Statement journals and sorts stay in memory: the history index
		// writes thousands of small rows per batch. It is set per
		// connection here because SQLite refuses to change it inside a
		// transaction once the connection has used temporary storage.
		q.Add("_pragma", "temp_store(MEMORY)")
		if extra != "" {
			q.Add("_pragma", extra)
		}
		return "file:" + dbPath + "?" + q.Encode()
	}
	w, err := sql.Open("sqlite", dsn(""))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dbPath, err)
	}
	w.SetMaxOpenConns(1)
	r, err := sql.Open("sqlite", dsn("query_only(1)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", dbPath, err)
	}
	r.SetMaxOpenConns(4)
	s := &Store{W: w, R: r, Path: dbPath, schema: sc}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", dbPath, err)
	}
	if err := s.probe(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", dbPath, err)
	}
	return s, nil
}

// OpenReadOnly opens an existing store that cannot be written (a
// read-only state dir or file system): both pools read the database file
// as it stands, without its write-ahead log (immutable), so what the last
// writer left in the log but did not checkpoint is not seen. It migrates
// nothing: a store of another schema version is refused.
func OpenReadOnly(ctx context.Context, dbPath string) (*Store, error) {
	return openReadOnly(ctx, dbPath, mainSchema)
}

// OpenIndexReadOnly opens an existing history index that cannot be
// written, as OpenReadOnly does the main database.
func OpenIndexReadOnly(ctx context.Context, dbPath string) (*Store, error) {
	return openReadOnly(ctx, dbPath, indexSchema)
}

func openReadOnly(ctx context.Context, dbPath string, sc *schema) (*Store, error) {
	if err := checkFile(dbPath); err != nil {
		return nil, fmt.Errorf("open store %s read-only: %w", dbPath, err)
	}
	dsn := "file:" + dbPath + "?mode=ro&immutable=1&_pragma=query_only(1)"
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s read-only: %w", dbPath, err)
	}
	w.SetMaxOpenConns(1)
	r, err := sql.Open("sqlite", dsn)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s read-only: %w", dbPath, err)
	}
	r.SetMaxOpenConns(4)
	s := &Store{W: w, R: r, Path: dbPath, ReadOnly: true, schema: sc}
	var have int
	if err := r.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s read-only: %w", dbPath, err)
	}
	ms, err := loadMigrations(sc)
	if err != nil {
		s.Close()
		return nil, err
	}
	if want := ms[len(ms)-1].version; have != want {
		s.Close()
		return nil, fmt.Errorf("open store %s read-only: its schema is version %d, this muster's %d, and it cannot be migrated where it cannot be written", dbPath, have, want)
	}
	return s, nil
}

// IsReadOnly reports whether err says the store's file or directory
// cannot be written.
func IsReadOnly(err error) bool {
	if errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "readonly database") || strings.Contains(msg, "read-only file system") ||
		strings.Contains(msg, "unable to open database file")
}

// Close closes both pools.
func (s *Store) Close() error {
	return errors.Join(s.W.Close(), s.R.Close())
}

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations(sc *schema) ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, sc.dir)
	if err != nil {
		return nil, err
	}
	var ms []migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		if !ok {
			return nil, fmt.Errorf("migration %s: name must be NNN_what.sql", name)
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", name, err)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share version %d", prev, name, v)
		}
		seen[v] = name
		body, err := migrationFS.ReadFile(path.Join(sc.dir, name))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

func (s *Store) migrate(ctx context.Context) error {
	return s.migrateTo(ctx, 0)
}

// migrateTo applies the pending migrations up to version upTo (0: all of
// them).
func (s *Store) migrateTo(ctx context.Context, upTo int) error {
	ms, err := loadMigrations(s.schema)
	if err != nil {
		return err
	}
	if _, err := s.W.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := s.W.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		applied[v] = true
	}
	rows.Close()
	ran := false
	for _, m := range ms {
		if applied[m.version] || upTo > 0 && m.version > upTo {
			continue
		}
		ran = true
		tx, err := s.W.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))`, m.version, m.name); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	if ran {
		s.compact(ctx)
	}
	return nil
}

// compact rewrites the database when the migrations just applied left
// most of its pages free: migration 014 dropped the history index, often
// most of an older muster.db, and SQLite only reuses free pages, never
// gives them back. A failure leaves the free pages to be reused.
func (s *Store) compact(ctx context.Context) {
	var free, pages int64
	if s.W.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free) != nil ||
		s.W.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages) != nil {
		return
	}
	if free > 0 && free*2 >= pages {
		s.W.ExecContext(ctx, `VACUUM`)
	}
}
