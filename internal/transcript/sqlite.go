package transcript

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// OpenSQLite opens a SQLite database that another program owns (OpenCode's
// opencode.db, Cursor's store.db) strictly for reading, without creating,
// changing or deleting any file beside it:
//
//   - no -wal file (or an empty one): the database is opened immutable, so
//     SQLite takes no locks and creates no -wal or -shm file;
//   - a -wal file and its -shm index: opened mode=ro, which reads the
//     committed WAL content the way every reader of a live database does
//     (the only file it touches is the shared-memory index, never the
//     database or the log);
//   - a -wal file without -shm (a crashed or copied database): SQLite would
//     create the index, so the database and its log are copied into a
//     private temporary directory and the copy is read.
//
// The returned close function closes the database and removes any copy.
func OpenSQLite(ctx context.Context, path string) (*sql.DB, func() error, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("open database %s: not a regular file", path)
	}
	query := "mode=ro&immutable=1"
	open := path
	cleanup := func() error { return nil }
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		if _, err := os.Stat(path + "-shm"); err == nil {
			query = "mode=ro"
		} else {
			dir, err := os.MkdirTemp("", "muster-sqlite-")
			if err != nil {
				return nil, nil, fmt.Errorf("copy database: %w", err)
			}
			cleanup = func() error { return os.RemoveAll(dir) }
			open = filepath.Join(dir, filepath.Base(path))
			if err := errors.Join(copyFile(path, open), copyFile(path+"-wal", open+"-wal")); err != nil {
				cleanup()
				return nil, nil, fmt.Errorf("copy database: %w", err)
			}
			query = "mode=ro"
		}
	}
	abs, err := filepath.Abs(open)
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: query + "&_pragma=query_only(1)&_pragma=mmap_size(1073741824)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		cleanup()
		return nil, nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return db, func() error { return errors.Join(db.Close(), cleanup()) }, nil
}

// SQLiteColumns lists the columns of table, so that readers of databases
// whose schema changes between versions select only what exists. A missing
// table gives an empty set.
func SQLiteColumns(ctx context.Context, db *sql.DB, table string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", table, err)
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("read columns of %s: %w", table, err)
		}
		cols[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", table, err)
	}
	return cols, nil
}

func copyFile(from, to string) error {
	in, err := OpenFile(from)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}
