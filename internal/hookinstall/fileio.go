package hookinstall

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// BackupSuffix is appended to a config file's path to name its backup.
const BackupSuffix = ".muster-backup"

// file is a config file as read before an edit.
type file struct {
	path    string // the path the provider reads (maybe a symlink)
	real    string // where the bytes live; writes go here
	exists  bool
	data    []byte
	mode    fs.FileMode
	symlink bool
	modTime time.Time
	size    int64
}

// readFile reads path, following a symlink so that a dotfile managed as a
// symlink is edited in place instead of being replaced by a regular file.
func readFile(path string) (*file, error) {
	f := &file{path: path, real: path, mode: 0o644}
	li, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if li.Mode()&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: broken symlink: %w", path, err)
		}
		f.real, f.symlink = real, true
	}
	fi, err := os.Stat(f.real)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: not a regular file", path)
	}
	data, err := os.ReadFile(f.real)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f.exists, f.data, f.mode = true, data, fi.Mode().Perm()
	f.modTime, f.size = fi.ModTime(), fi.Size()
	return f, nil
}

// unchanged reports whether the file still looks as it did when read, so
// that a concurrent edit (say, by the provider itself) is not overwritten.
func (f *file) unchanged() error {
	fi, err := os.Stat(f.real)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !f.exists:
		return nil
	case err != nil && !f.exists:
		return fmt.Errorf("%s: %w", f.path, err)
	case err == nil && !f.exists:
		return fmt.Errorf("%s appeared while muster was editing it; run the command again", f.path)
	case err != nil:
		return fmt.Errorf("%s: %w", f.path, err)
	case !fi.ModTime().Equal(f.modTime) || fi.Size() != f.size:
		return fmt.Errorf("%s changed while muster was editing it; run the command again", f.path)
	}
	return nil
}

// writeAtomic replaces the file's content: a temporary file in the same
// directory is written, synced, given the old mode and renamed over the
// target; then the directory is synced.
func (f *file) writeAtomic(data []byte) error {
	dir := filepath.Dir(f.real)
	if !f.exists {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	if err := f.unchanged(); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.real)+".muster-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := tmp.Chmod(f.mode); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := os.Rename(name, f.real); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	ok = true
	syncDir(dir)
	return nil
}

// remove deletes the file (never through a symlink: the link is kept and
// the caller writes the content instead).
func (f *file) remove() error {
	if err := f.unchanged(); err != nil {
		return err
	}
	if err := os.Remove(f.real); err != nil {
		return fmt.Errorf("remove %s: %w", f.path, err)
	}
	syncDir(filepath.Dir(f.real))
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not every file system supports it
		d.Close()
	}
}

// backupPath names the backup of the file at path.
func backupPath(path string) string { return path + BackupSuffix }

// writeBackup saves the file's current bytes as its backup unless a backup
// already exists. It reports the backup path when it wrote one.
func (f *file) writeBackup() (string, error) {
	bp := backupPath(f.path)
	out, err := os.OpenFile(bp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
	if errors.Is(err, fs.ErrExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("back up %s: %w", f.path, err)
	}
	_, werr := out.Write(f.data)
	serr := out.Sync()
	cerr := out.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(bp)
		return "", fmt.Errorf("back up %s: %w", f.path, err)
	}
	return bp, nil
}

// readBackup returns the backup's bytes, or nil when there is none.
func readBackup(path string) ([]byte, bool) {
	b, err := os.ReadFile(backupPath(path))
	if err != nil {
		return nil, false
	}
	return b, true
}
