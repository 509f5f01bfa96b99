package realcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// CLI names one of the agent CLIs the package can run.
type CLI string

// The CLIs, by the command their users type.
const (
	Claude CLI = "claude"
	Codex  CLI = "codex"
	Gemini CLI = "gemini"
)

// CLIs lists every CLI the package can run.
var CLIs = []CLI{Claude, Codex, Gemini}

// Package is a pinned npm release of a CLI.
type Package struct {
	Name    string // npm package name
	Version string // exact version
	Bin     string // executable under node_modules/.bin
}

// Spec returns the npm package for "name@version".
func (p Package) Spec() string { return p.Name + "@" + p.Version }

// packages are the pinned releases: the newest the npm registry served on
// 2026-12-05 (`npm view @anthropic-ai/claude-code version` and so on).
var packages = map[CLI]Package{
	Claude: {Name: "@anthropic-ai/claude-code", Version: "2.1.332", Bin: "claude"},
	Codex:  {Name: "@openai/codex", Version: "0.171.0", Bin: "codex"},
	Gemini: {Name: "@google/gemini-cli", Version: "0.61.0", Bin: "gemini"},
}

// VersionsEnv overrides pinned versions for a run of the suite:
// "claude@2.1.328,codex@0.169.0" (any subset of the CLIs).
const VersionsEnv = "MUSTER_REALCLI_VERSIONS"

// Package returns the release of c the suite runs: the pinned one, or the
// one VersionsEnv names.
func (c CLI) Package() (Package, error) {
	p, ok := packages[c]
	if !ok {
		return Package{}, fmt.Errorf("unknown CLI %q (want claude, codex or gemini)", string(c))
	}
	over, err := ParseVersions(os.Getenv(VersionsEnv))
	if err != nil {
		return Package{}, err
	}
	if v, ok := over[c]; ok {
		p.Version = v
	}
	return p, nil
}

// ParseVersions reads a VersionsEnv value: comma-separated CLI@VERSION,
// each CLI at most once; "" is no override.
func ParseVersions(s string) (map[CLI]string, error) {
	out := map[CLI]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, item := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(item), "@")
		c := CLI(name)
		switch _, known := packages[c]; {
		case !ok || name == "" || v == "":
			return nil, fmt.Errorf("%s: %q is not CLI@VERSION (for example codex@0.171.0)", VersionsEnv, item)
		case !known:
			return nil, fmt.Errorf("%s: unknown CLI %q (want claude, codex or gemini)", VersionsEnv, name)
		case !validVersion(v):
			return nil, fmt.Errorf("%s: %q is not a version npm can install", VersionsEnv, v)
		}
		if _, dup := out[c]; dup {
			return nil, fmt.Errorf("%s: %s is named twice", VersionsEnv, name)
		}
		out[c] = v
	}
	return out, nil
}

// validVersion reports whether v is a version or tag that is safe as part
// of a directory name and an npm argument: letters, digits, '.', '-', '+'
// and '_', not starting with '-' or '.'.
func validVersion(v string) bool {
	if v == "" || len(v) > 64 || v[0] == '-' || v[0] == '.' {
		return false
	}
	for _, r := range v {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune(".-+_", r)) {
			return false
		}
	}
	return true
}

// SkipEnv is the variable that, set to 1, skips every test of the suite.
const SkipEnv = "MUSTER_SKIP_REALCLI"

// CacheEnv is the variable that overrides the install cache directory.
const CacheEnv = "MUSTER_REALCLI_CACHE"

// CacheDir returns the directory the CLIs are installed under:
// $MUSTER_REALCLI_CACHE, else muster-realcli in the user cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return filepath.Abs(d)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the install cache (set %s): %w", CacheEnv, err)
	}
	return filepath.Join(base, "muster-realcli"), nil
}

// completeMarker is written into a package directory once npm install has
// finished, so that a directory left by an interrupted install is redone.
const completeMarker = ".muster-install-complete"

var (
	installMu   sync.Mutex
	installDone = map[CLI]string{}
)

// Install returns the path of cli's executable, installing its pinned
// release with npm into the cache when it is not there yet. It skips t when
// MUSTER_SKIP_REALCLI=1 and fails t, saying why, when npm is missing or the
// install fails. Parallel tests and test binaries may call it at once: each
// package installs under its own file lock, once.
func Install(t testing.TB, cli CLI) string {
	t.Helper()
	SkipIfDisabled(t)
	bin, err := install(t.Context(), cli, t.Logf)
	if err != nil {
		t.Fatalf("realcli: %v", err)
	}
	return bin
}

// SkipIfDisabled skips t when MUSTER_SKIP_REALCLI=1.
func SkipIfDisabled(t testing.TB) {
	t.Helper()
	if os.Getenv(SkipEnv) == "1" {
		t.Skipf("real-CLI suite skipped: %s=1", SkipEnv)
	}
}

func install(ctx context.Context, cli CLI, logf func(string, ...any)) (string, error) {
	pkg, err := cli.Package()
	if err != nil {
		return "", err
	}
	installMu.Lock()
	bin, ok := installDone[cli]
	installMu.Unlock()
	if ok {
		return bin, nil
	}
	// Asked for even when the cache is warm: the CLIs run on node, and a
	// machine without npm must not look like one where the suite passed.
	for _, tool := range []string{"npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("install %s: %s not found on PATH; %s", pkg.Spec(), tool, npmHint)
		}
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, filepath.FromSlash(pkg.Spec()))
	bin = filepath.Join(dir, "node_modules", ".bin", pkg.Bin)
	if !installed(dir, bin) {
		if err := installLocked(ctx, cache, dir, pkg, logf); err != nil {
			return "", err
		}
	}
	installMu.Lock()
	installDone[cli] = bin
	installMu.Unlock()
	return bin, nil
}

func installed(dir, bin string) bool {
	_, err1 := os.Stat(filepath.Join(dir, completeMarker))
	_, err2 := os.Stat(bin)
	return err1 == nil && err2 == nil
}

// npmHint says how to get npm, or skip, in every install failure.
const npmHint = "the real-CLI end-to-end suite installs the agent CLIs with npm: install Node.js 20+ and npm, or set " + SkipEnv + "=1 to skip the suite"

func installLocked(ctx context.Context, cache, dir string, pkg Package, logf func(string, ...any)) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("install %s: npm not found on PATH; %s", pkg.Spec(), npmHint)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("install %s: %w", pkg.Spec(), err)
	}
	lockPath := filepath.Join(cache, strings.NewReplacer("/", "-", "@", "").Replace(pkg.Name)+".lock")
	unlock, err := lockFile(lockPath)
	if err != nil {
		return fmt.Errorf("install %s: %w", pkg.Spec(), err)
	}
	defer unlock()
	bin := filepath.Join(dir, "node_modules", ".bin", pkg.Bin)
	if installed(dir, bin) { // another process installed it while we waited
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("install %s: remove partial install: %w", pkg.Spec(), err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install %s: %w", pkg.Spec(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-fund", "--no-audit", "--loglevel=error", pkg.Spec())
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("install %s: npm install: %w; %s\n%s", pkg.Spec(), err, npmHint, tail(out, 2000))
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("install %s: npm install finished but %s is missing", pkg.Spec(), bin)
	}
	if err := os.WriteFile(filepath.Join(dir, completeMarker), []byte(pkg.Spec()+"\n"), 0o644); err != nil {
		return fmt.Errorf("install %s: %w", pkg.Spec(), err)
	}
	logf("realcli: installed %s into %s in %s", pkg.Spec(), dir, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// lockFile takes an exclusive lock on path, waiting for other holders.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
