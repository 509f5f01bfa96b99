package daemon

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/musterhq/muster/internal/paths"
)

// ErrAlreadyRunning means another daemon owns this MUSTER_HOME.
var ErrAlreadyRunning = errors.New("a muster daemon is already running")

// lockFile holds an exclusive flock for the daemon's lifetime: the kernel
// drops it when the process dies, so a crashed daemon never blocks the next.
// Its content, "PID PHASE", tells clients whether a holder that does not
// answer is still starting (wait for it) or should be answering (stuck).
type lockFile struct{ f *os.File }

func acquireLock(dirs paths.Dirs) (*lockFile, error) {
	path := dirs.DaemonLock()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if h := dirs.ReadDaemonLock(); h.PID != 0 {
			return nil, fmt.Errorf("%w for this home (pid %d)", ErrAlreadyRunning, h.PID)
		}
		return nil, fmt.Errorf("%w for this home", ErrAlreadyRunning)
	}
	l := &lockFile{f: f}
	l.setPhase(paths.PhaseStarting)
	return l, nil
}

// setPhase records what the daemon is doing, in one write that a reader
// sees whole (the content only grows or keeps its length).
func (l *lockFile) setPhase(phase string) {
	line := []byte(strconv.Itoa(os.Getpid()) + " " + phase + "\n")
	l.f.Truncate(int64(len(line)))
	l.f.WriteAt(line, 0)
}

func (l *lockFile) release() {
	l.f.Truncate(0)
	l.f.Close()
}
