package hookevent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// StateDir is where the helper keeps its per-session state files: a
// `hookstate` directory beside the events socket, i.e. inside the 0700
// runtime dir of the daemon that launched the pane.
func StateDir(eventSocket string) string {
	return filepath.Join(filepath.Dir(eventSocket), "hookstate")
}

// stateFile is one session's state file, locked (flock LOCK_EX) from open
// to Close so that concurrent hooks of one session apply their updates one
// after another.
type stateFile struct {
	f *os.File
}

// maxStateFile bounds what is read back; a real state is a few hundred bytes.
const maxStateFile = 16 << 10

// openState opens and locks the state file of (provider, session) in dir.
// dir's parent must exist: the helper never creates the runtime dir itself.
func openState(dir, provider, session string) (*stateFile, error) {
	sum := sha256.Sum256([]byte(session))
	name := filepath.Join(dir, provider+"-"+hex.EncodeToString(sum[:12])+".json")
	for range 3 {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if errors.Is(err, os.ErrNotExist) {
			// First hook under this daemon: create the directory (its
			// parent, the runtime dir, must exist already).
			if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
				return nil, fmt.Errorf("create hook state dir: %w", err)
			}
			f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		}
		if err != nil {
			return nil, fmt.Errorf("open hook state: %w", err)
		}
		if err := flock(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock hook state: %w", err)
		}
		// A hook that ended the session may have unlinked the file while we
		// waited for the lock; its content then belongs to nobody.
		var st syscall.Stat_t
		if err := syscall.Fstat(int(f.Fd()), &st); err == nil && st.Nlink > 0 {
			return &stateFile{f: f}, nil
		}
		f.Close()
	}
	return nil, errors.New("open hook state: file keeps disappearing")
}

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// load returns the stored state; an empty, unreadable or foreign file reads
// as a fresh state of session.
func (s *stateFile) load(session string) *State {
	b, err := io.ReadAll(io.LimitReader(s.f, maxStateFile))
	st := &State{Session: session}
	if err != nil || len(b) == 0 {
		return st
	}
	var got State
	if json.Unmarshal(b, &got) != nil || got.Session != session {
		return st
	}
	return &got
}

// save replaces the file's content with st.
func (s *stateFile) save(st *State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode hook state: %w", err)
	}
	if err := s.f.Truncate(0); err != nil {
		return fmt.Errorf("write hook state: %w", err)
	}
	if _, err := s.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("write hook state: %w", err)
	}
	return nil
}

// remove empties and deletes the file while the lock is still held.
func (s *stateFile) remove() error {
	if err := s.f.Truncate(0); err != nil {
		return fmt.Errorf("remove hook state: %w", err)
	}
	if err := os.Remove(s.f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove hook state: %w", err)
	}
	return nil
}

// Close releases the lock.
func (s *stateFile) Close() error { return s.f.Close() }
