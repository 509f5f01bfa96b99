package hookinstall

import (
	"fmt"
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

// jsonSpecOf returns the JSON description of a registered provider.
func jsonSpecOf(name string) *jsonSpec {
	sp, err := spec(name)
	if err != nil || sp.JSON == nil {
		panic(fmt.Sprintf("no JSON hook spec for %s: %v", name, err))
	}
	return jsonSpecFor(sp, name)
}

func mustSettingsJSON(t *testing.T, provider, musterPath string) string {
	t.Helper()
	s, ok := SettingsJSON(provider, musterPath)
	if !ok {
		t.Fatalf("no settings JSON for %s", provider)
	}
	return s
}

func pluginSource(t *testing.T, provider, musterPath string) string {
	t.Helper()
	sp, err := spec(provider)
	if err != nil || sp.Plugin == nil {
		t.Fatalf("no plugin for %s: %v", provider, err)
	}
	return sp.Plugin.Source(musterPath, marker())
}
