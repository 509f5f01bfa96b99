// Package paths owns where Muster keeps its runtime sockets, its state and its
// configuration, honouring MUSTER_HOME and the XDG base directories.
package paths

import (
	"fmt"
	"os"
	"path/filepath"
)

// Dirs are the three places Muster writes to.
type Dirs struct {
	Runtime string // sockets and the daemon pid/lock file; mode 0700
	State   string // muster.db, history.db, daemon.log, blobs; mode 0700
	Config  string // config.toml
}

// Resolve computes the directories from the environment. MUSTER_HOME=DIR puts
// all three under DIR so that tests never touch the user's real state.
func Resolve(getenv func(string) string) (Dirs, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if home := getenv("MUSTER_HOME"); home != "" {
		abs, err := filepath.Abs(home)
		if err != nil {
			return Dirs{}, fmt.Errorf("resolve MUSTER_HOME: %w", err)
		}
		return Dirs{
			Runtime: filepath.Join(abs, "run"),
			State:   filepath.Join(abs, "state"),
			Config:  filepath.Join(abs, "config"),
		}, nil
	}
	userHome := getenv("HOME")
	if userHome == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return Dirs{}, fmt.Errorf("find home directory: %w", err)
		}
		userHome = h
	}
	d := Dirs{}
	if x := getenv("XDG_RUNTIME_DIR"); x != "" {
		d.Runtime = filepath.Join(x, "muster")
	} else {
		d.Runtime = filepath.Join(os.TempDir(), fmt.Sprintf("muster-%d", os.Getuid()))
	}
	if x := getenv("XDG_STATE_HOME"); x != "" {
		d.State = filepath.Join(x, "muster")
	} else {
		d.State = filepath.Join(userHome, ".local", "state", "muster")
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		d.Config = filepath.Join(x, "muster")
	} else {
		d.Config = filepath.Join(userHome, ".config", "muster")
	}
	return d, nil
}

// ControlSocket is the path of the daemon's control API socket.
func (d Dirs) ControlSocket() string { return filepath.Join(d.Runtime, "control.sock") }

// EventSocket is the path of the agent event socket (seed 004).
func (d Dirs) EventSocket() string { return filepath.Join(d.Runtime, "events.sock") }

// Database is the path of the SQLite store.
func (d Dirs) Database() string { return filepath.Join(d.State, "muster.db") }

// HistoryDatabase is the path of the transcript history index, a SQLite
// database apart from the store (internal/history).
func (d Dirs) HistoryDatabase() string { return filepath.Join(d.State, "history.db") }

// ConfigFile is the path of config.toml.
func (d Dirs) ConfigFile() string { return filepath.Join(d.Config, "config.toml") }

// Blobs is the directory of published immutable blobs.
func (d Dirs) Blobs() string { return filepath.Join(d.State, "blobs") }

// EnsureRuntime creates the runtime directory with mode 0700 and refuses one
// that another user owns or that others can enter, because the sockets in it
// carry authority over every pane.
func (d Dirs) EnsureRuntime() error {
	if err := os.MkdirAll(d.Runtime, 0o700); err != nil {
		return fmt.Errorf("create runtime dir: %w", err)
	}
	if err := os.Chmod(d.Runtime, 0o700); err != nil {
		return fmt.Errorf("secure runtime dir: %w", err)
	}
	st, err := os.Lstat(d.Runtime)
	if err != nil {
		return fmt.Errorf("check runtime dir: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("runtime dir %s is not a directory", d.Runtime)
	}
	if uid, ok := ownerUID(st); ok && uid != os.Getuid() {
		return fmt.Errorf("runtime dir %s belongs to uid %d, not to you", d.Runtime, uid)
	}
	return nil
}

// EnsureState creates the state directory with mode 0700, and takes group
// and other access away from an existing one: the database, logs and blobs
// in it are the owner's alone.
func (d Dirs) EnsureState() error {
	if err := os.MkdirAll(d.State, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	st, err := os.Stat(d.State)
	if err != nil {
		return fmt.Errorf("check state dir: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("state dir %s is not a directory", d.State)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		if err := os.Chmod(d.State, perm&^0o077); err != nil {
			return fmt.Errorf("secure state dir: %w", err)
		}
	}
	return nil
}
