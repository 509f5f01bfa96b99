package cli

import (
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// waitDaemonExit waits (bounded) until the daemon of runtimeDir has exited,
// which is when its lock is free: its panes are closed by then.
func waitDaemonExit(runtimeDir string) {
	path := filepath.Join(runtimeDir, "daemon.lock")
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		f, err := os.Open(path)
		if err != nil {
			return
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		f.Close()
		if err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
