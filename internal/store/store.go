// Package store owns Muster's durable state: one SQLite database (pure Go,
// modernc.org/sqlite) in WAL mode with versioned migrations. All writes go
// through a single connection; reads use a separate pool.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

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

	recent recentIDs // of the event writers (events.go)
}

// Recovery is a corrupt database Open moved aside.
type Recovery struct {
	Why    string // what was wrong with it
	Backup string // where it is now
}

// Notice is the one line that tells the user.
func (r *Recovery) Notice() string {
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
		rec = &Recovery{Why: ce.Why, Backup: backup}
	}
	s, err := open(ctx, dbPath)
	if err != nil && rec == nil && isCorrupt(err) {
		backup, merr := moveAside(dbPath, time.Now())
		if merr != nil {
			return nil, fmt.Errorf("%w, and %w", err, merr)
		}
		rec = &Recovery{Why: errors.Unwrap(err).Error(), Backup: backup}
		s, err = open(ctx, dbPath)
	}
	if err != nil {
		return nil, err
	}
	s.Recovered = rec
	return s, nil
}

func open(ctx context.Context, dbPath string) (*Store, error) {
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
	s := &Store{W: w, R: r, Path: dbPath}
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
	s := &Store{W: w, R: r, Path: dbPath, ReadOnly: true}
	var have int
	if err := r.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s read-only: %w", dbPath, err)
	}
	ms, err := loadMigrations()
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

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
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
		body, err := migrationFS.ReadFile(path.Join("migrations", name))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
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
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
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
	return nil
}
