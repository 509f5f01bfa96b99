package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrAlreadyRunning means another daemon owns this MUSTER_HOME.
var ErrAlreadyRunning = errors.New("a muster daemon is already running")

// lockFile holds an exclusive flock for the daemon's lifetime: the kernel
// drops it when the process dies, so a crashed daemon never blocks the next.
type lockFile struct{ f *os.File }

func acquireLock(runtimeDir string) (*lockFile, error) {
	path := filepath.Join(runtimeDir, "daemon.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if pid := strings.TrimSpace(string(b)); pid != "" {
			return nil, fmt.Errorf("%w for this home (pid %s)", ErrAlreadyRunning, pid)
		}
		return nil, fmt.Errorf("%w for this home", ErrAlreadyRunning)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &lockFile{f: f}, nil
}

func (l *lockFile) release() {
	l.f.Truncate(0)
	l.f.Close()
}
