// Package fakeagenttest builds the fake agent CLI (internal/testing/fakeagent)
// for tests and reads what it records.
//
//	dir := fakeagenttest.Build(t)
//	cmd.Env = append(env, "PATH="+fakeagenttest.Path(dir), "FAKEAGENT_LOG="+log)
//
// dir holds the binary "fakeagent" and the links "claude", "codex" and
// "gemini" to it; the fake plays the CLI it is called as. The binary is
// built once per test process and kept in a cache directory under the
// system temp dir, keyed by the Go version and the fake's sources, so that
// later test processes reuse it.
package fakeagenttest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
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

var (
	once     sync.Once
	buildDir string
	buildErr error
)

// Build returns the directory holding the fake agent and its links,
// building it on first use. It fails the test when the build fails.
func Build(t testing.TB) string {
	t.Helper()
	once.Do(func() { buildDir, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("build fakeagent: %v", buildErr)
	}
	return buildDir
}

// Path returns PATH with dir first.
func Path(dir string) string {
	if p := os.Getenv("PATH"); p != "" {
		return dir + string(os.PathListSeparator) + p
	}
	return dir
}

// srcDir is the fakeagent package directory.
func srcDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the fakeagent sources")
	}
	return filepath.Dir(filepath.Dir(file)), nil
}

// moduleRoot walks up from dir to the directory holding go.mod.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
	}
}

// cacheKey hashes what the binary depends on: the toolchain, the fake's
// non-test sources, go.mod and go.sum.
func cacheKey(src, root string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH, layout)
	files, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	files = append(files, filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// goTool finds the go command: go test puts its own GOROOT/bin first on
// PATH, and GOROOT names it when PATH does not.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "go"
}

func build() (string, error) {
	src, err := srcDir()
	if err != nil {
		return "", err
	}
	root, err := moduleRoot(src)
	if err != nil {
		return "", err
	}
	key, err := cacheKey(src, root)
	if err != nil {
		return "", fmt.Errorf("hash sources: %w", err)
	}
	dir := filepath.Join(os.TempDir(), "muster-fakeagent-"+key)
	if complete(dir) {
		now := time.Now()
		_ = os.Chtimes(dir, now, now) // in use: keep it from pruning
		return dir, nil
	}
	defer prune(dir)
	tmp, err := os.MkdirTemp(os.TempDir(), "muster-fakeagent-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(goTool(), "build", "-o", filepath.Join(tmp, "fakeagent"), ".")
	cmd.Dir = src
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out.Bytes())
	}
	for _, n := range Names[:3] {
		if n == "gemini" {
			continue
		}
		if err := os.Symlink("fakeagent", filepath.Join(tmp, n)); err != nil {
			return "", err
		}
	}
	// The real Gemini CLI is a Node program that relaunches itself, so its
	// processes are named node (the capture check relies on that); run the
	// fake under that name too, keeping argv[0] for the persona.
	if err := os.Mkdir(filepath.Join(tmp, "runtime"), 0o755); err != nil {
		return "", err
	}
	if err := os.Link(filepath.Join(tmp, "fakeagent"), filepath.Join(tmp, "runtime", "node")); err != nil {
		return "", err
	}
	wrapper := "#!/bin/bash\nexec -a \"$0\" \"$(dirname \"$0\")/runtime/node\" \"$@\"\n"
	if err := os.WriteFile(filepath.Join(tmp, "gemini"), []byte(wrapper), 0o755); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another test process got there first.
		if complete(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("install fakeagent: %w", err)
	}
	return dir, nil
}

// prune removes builds of other sources that no test used for a day.
func prune(keep string) {
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), "muster-fakeagent-*"))
	for _, d := range old {
		st, err := os.Stat(d)
		if d == keep || err != nil || !st.IsDir() || time.Since(st.ModTime()) < 24*time.Hour {
			continue
		}
		_ = os.RemoveAll(d)
	}
}

func complete(dir string) bool {
	for _, n := range Names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
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
