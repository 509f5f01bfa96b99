package paths

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// StableExecutable returns a path to the muster binary that outlives this
// process: `go run` builds into a temporary directory it deletes, and hook
// commands written into provider configs must keep working.
func StableExecutable(stateDir string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if !strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return exe, nil
	}
	dst := filepath.Join(stateDir, "bin", "muster")
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return exe, err
	}
	src, err := os.Open(exe)
	if err != nil {
		return exe, err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".muster-*")
	if err != nil {
		return exe, err
	}
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return exe, err
	}
	tmp.Chmod(0o755)
	tmp.Close()
	if err := os.Rename(tmp.Name(), dst); err != nil {
		os.Remove(tmp.Name())
		return exe, err
	}
	return dst, nil
}

// HookHelperName is the file name of the hook helper (cmd/muster-hook).
const HookHelperName = "muster-hook"

// HookHelper returns the hook helper installed beside the muster binary at
// musterPath, or "" when there is none (a `go run`, or a build of
// cmd/muster alone): hook commands then fall back to `muster hook event`.
func HookHelper(musterPath string) string {
	if musterPath == "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(musterPath), HookHelperName)
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return ""
	}
	return p
}
