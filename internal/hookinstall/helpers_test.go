package hookinstall

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func lookPath(name string) (string, error) { return exec.LookPath(name) }

// runCmd runs a program in dir with the test's environment minus any
// MUSTER_* variables, plus extra.
func runCmd(dir string, extra []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MUSTER_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, extra...)
	return cmd.CombinedOutput()
}

// waitForLines reads path after the program that wrote it has exited; the
// plugin's queue keeps node alive until every child finished.
func waitForLines(t *testing.T, path string, n int) []byte {
	t.Helper()
	b := readOrNil(t, path)
	if got := strings.Count(strings.TrimSpace(string(b)), "\n") + 1; b == nil || got < n {
		t.Fatalf("%s has %d lines, want %d:\n%s", path, got, n, b)
	}
	return b
}
