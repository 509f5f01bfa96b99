// Package fakeagenttest builds the fake agent CLI (internal/testing/fakeagent)
// for tests and reads what it records.
//
//	dir := fakeagenttest.Build(t)
//	cmd.Env = append(env, "PATH="+fakeagenttest.Path(dir), "FAKEAGENT_LOG="+log)
//
// dir holds the binary "fakeagent" and the links "claude", "codex" and
// "gemini" to it; the fake plays the CLI it is called as. The directory is
// built by testbin: once per test process, and kept in its cache so that
// later test processes reuse it.
package fakeagenttest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/musterhq/muster/internal/testing/testbin"
)

// layout versions the build directory's shape, part of the cache key.
const layout = "gemini-as-node"

// Names are the commands in the directory Build returns.
var Names = []string{"claude", "codex", "gemini", "fakeagent"}

// Environment variables the fake reads (see the fakeagent package doc).
const (
	EnvLog         = "FAKEAGENT_LOG"
	EnvHookLog     = "FAKEAGENT_HOOK_LOG"
	EnvExitAtStart = "FAKEAGENT_EXIT_AT_START"
	EnvNoHooks     = "FAKEAGENT_NO_HOOKS"
	EnvNotifyDelay = "FAKEAGENT_NOTIFY_DELAY"
	EnvIdleDelay   = "FAKEAGENT_IDLE_DELAY"
	EnvScript      = "FAKEAGENT_SCRIPT"
	EnvHome        = "FAKEAGENT_HOME"
	EnvHook        = "FAKEAGENT_HOOK"
	EnvCodexTrust  = "FAKEAGENT_CODEX_HOOK_TRUST"
)

// spec builds the fake with its links (see build).
var spec = testbin.Spec{
	Name:     "fakeagent",
	Packages: []string{"internal/testing/fakeagent"},
	Finish:   links,
	Layout:   layout,
	Want:     Names,
}

// Build returns the directory holding the fake agent and its links,
// building it on first use. It fails the test when the build fails.
func Build(t testing.TB) string {
	t.Helper()
	dir, err := testbin.Build(spec)
	if err != nil {
		t.Fatalf("build fakeagent: %v", err)
	}
	return dir
}

// Path returns PATH with dir first.
func Path(dir string) string {
	if p := os.Getenv("PATH"); p != "" {
		return dir + string(os.PathListSeparator) + p
	}
	return dir
}

// links adds the personas beside the fakeagent binary in dir.
func links(dir string) error {
	for _, n := range []string{"claude", "codex"} {
		if err := os.Symlink("fakeagent", filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	// The real Gemini CLI is a Node program that relaunches itself, so its
	// processes are named node (the capture check relies on that); run the
	// fake under that name too, keeping argv[0] for the persona.
	if err := os.Mkdir(filepath.Join(dir, "runtime"), 0o755); err != nil {
		return err
	}
	if err := os.Link(filepath.Join(dir, "fakeagent"), filepath.Join(dir, "runtime", "node")); err != nil {
		return err
	}
	wrapper := "#!/bin/bash\nexec -a \"$0\" \"$(dirname \"$0\")/runtime/node\" \"$@\"\n"
	return os.WriteFile(filepath.Join(dir, "gemini"), []byte(wrapper), 0o755)
}

// Invocation is one line of $FAKEAGENT_LOG: how the fake was started.
type Invocation struct {
	Persona string            `json:"persona"`
	Argv    []string          `json:"argv"`
	Cwd     string            `json:"cwd"`
	PID     int               `json:"pid"`
	PPID    int               `json:"ppid"`
	Env     map[string]string `json:"env"` // the MUSTER_* variables
}

// HookRun is one line of $FAKEAGENT_HOOK_LOG: one hook command the fake ran.
type HookRun struct {
	Persona  string `json:"persona"`
	Event    string `json:"event"`
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	Ms       int64  `json:"ms"`
}

// ReadLog reads $FAKEAGENT_LOG; a missing file is an empty log.
func ReadLog(path string) ([]Invocation, error) { return readLines[Invocation](path) }

// ReadHookLog reads $FAKEAGENT_HOOK_LOG; a missing file is an empty log.
func ReadHookLog(path string) ([]HookRun, error) { return readLines[HookRun](path) }

func readLines[T any](path string) ([]T, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}
