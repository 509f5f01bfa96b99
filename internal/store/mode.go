package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// fileMode is the mode of the database and of SQLite's -wal and -shm files
// beside it: they hold every session's command lines, environment and
// events, so only the owner may read them.
const fileMode = 0o600

// secureFiles makes sure the database at dbPath is created 0600 and that an
// existing one and its -wal/-shm files are no looser than that.
//
// SQLite creates a new database with 0644 (less the umask) but creates the
// -wal, -journal and -shm files with the database file's own permission
// bits (findCreateFileMode and unixOpenSharedMemory copy st_mode, and
// fchmod a new empty file to it). So creating the database file here with
// 0600 before SQLite opens it makes all of them 0600 from the start,
// whatever the umask, without touching the process-wide umask. An empty
// file is a valid new database. Files left 0644 by an older Muster are
// tightened on their open descriptor.
func secureFiles(dbPath string) error {
	f, err := os.OpenFile(dbPath, os.O_RDONLY|os.O_CREATE, fileMode)
	if err != nil {
		return err
	}
	err = tighten(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		f, err := os.Open(dbPath + suffix)
		if errors.Is(err, fs.ErrNotExist) {
			continue // SQLite creates it with the database's mode
		}
		if err != nil {
			return err
		}
		err = tighten(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// tighten removes group and other permission bits from the regular file f.
func tighten(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", f.Name())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		if err := f.Chmod(perm &^ 0o077); err != nil {
			return fmt.Errorf("restrict %s to its owner: %w", f.Name(), err)
		}
	}
	return nil
}
