package paths

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// DaemonLock is the path of the file whose flock makes one daemon per
// home; the kernel drops the lock when its holder dies.
func (d Dirs) DaemonLock() string { return filepath.Join(d.Runtime, "daemon.lock") }

// DaemonStderr is the file a daemon started on demand writes its stderr
// to: why it could not start, or what it changed on the way (a database
// moved aside), for the client that started it to print.
func (d Dirs) DaemonStderr() string { return filepath.Join(d.Runtime, "daemon.stderr") }

// StartLock is the file whose flock lets one client at a time start a
// daemon, so that clients racing a dead daemon start one, not several.
func (d Dirs) StartLock() string { return filepath.Join(d.Runtime, "start.lock") }

// Daemon phases, as the lock holder writes them after its pid.
const (
	PhaseStarting = "starting" // opening the store, not yet listening
	PhaseReady    = "ready"    // serving control.sock
	PhaseStopping = "stopping" // closing its panes
)

// LockHolder is what daemon.lock says about the daemon that holds it.
type LockHolder struct {
	Held  bool
	PID   int    // 0 when unknown
	Phase string // one of the Phase constants, or "" when unknown
}

// ReadDaemonLock reports whether a live process holds daemon.lock and
// what it wrote there ("PID PHASE\n").
func (d Dirs) ReadDaemonLock() LockHolder {
	f, err := os.Open(d.DaemonLock())
	if err != nil {
		return LockHolder{}
	}
	defer f.Close()
	var h LockHolder
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		h.Held = true
	} else {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	}
	var buf [64]byte
	n, _ := f.ReadAt(buf[:], 0)
	fields := strings.Fields(string(buf[:n]))
	if len(fields) > 0 {
		h.PID, _ = strconv.Atoi(fields[0])
	}
	if len(fields) > 1 {
		h.Phase = fields[1]
	}
	return h
}
