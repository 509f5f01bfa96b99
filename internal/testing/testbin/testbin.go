// Package testbin builds this module's programs for tests that run them as
// real processes: the muster binary with the muster-hook helper beside it
// (so that `muster hooks setup` installs the helper and agents run the real
// hook path), and the fake agent CLI.
//
//	func TestMain(m *testing.M) {
//		bin, err := testbin.BuildMuster()
//		...
//	}
//
// or, in a test, testbin.Muster(t).
//
// A Spec is built at most once per test process. The result is also kept in
// a cache directory under the system temp dir, keyed by a hash of every
// non-test file of the module, the Go toolchain and the build environment,
// so that the other test binaries of one `go test ./...` run reuse it
// instead of linking the same 27 MB binary again. A file lock makes
// concurrent test processes build a key once, and a process holds a shared
// lock on the entry it uses until it exits, so that pruning (of entries
// beyond the few most recently used) never removes a binary in use. When
// the sources change, the key changes and the next test builds afresh;
// when they change during a build, the build is not cached.
package testbin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A Spec is a set of main packages of this module built into one directory.
type Spec struct {
	// Name names the cache entry; it must be unique per Spec.
	Name string
	// Packages are the main packages, as module-relative directories
	// ("cmd/muster"); each binary is named after its directory.
	Packages []string
	// Finish, when set, adds to the directory after the build: links,
	// wrapper scripts. Bump Layout whenever what it does changes, since
	// the cache key cannot see a function.
	Finish func(dir string) error
	Layout string
	// Want lists the files a complete directory holds; by default the
	// binaries.
	Want []string
}

// MusterSpec is cmd/muster with cmd/muster-hook beside it.
var MusterSpec = Spec{Name: "muster", Packages: []string{"cmd/muster", "cmd/muster-hook"}}

// BuildMuster builds MusterSpec (once per process) and returns the path of
// the muster binary, for a TestMain.
func BuildMuster() (string, error) {
	dir, err := Build(MusterSpec)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "muster"), nil
}

// Muster is BuildMuster for a test: it fails t when the build fails.
func Muster(t testing.TB) string {
	t.Helper()
	bin, err := BuildMuster()
	if err != nil {
		t.Fatalf("build muster: %v", err)
	}
	return bin
}

type result struct {
	once sync.Once
	dir  string
	err  error
}

var (
	mu      sync.Mutex
	results = map[string]*result{}
	shared  *cache // nil until first use
)

// Build returns the directory holding s's binaries, building them on the
// first call for s.Name in this process.
func Build(s Spec) (string, error) {
	mu.Lock()
	r := results[s.Name]
	if r == nil {
		r = &result{}
		results[s.Name] = r
	}
	mu.Unlock()
	r.once.Do(func() {
		c, err := defaultCache()
		if err != nil {
			r.err = err
			return
		}
		r.dir, r.err = c.get(s)
	})
	return r.dir, r.err
}

func defaultCache() (*cache, error) {
	mu.Lock()
	defer mu.Unlock()
	if shared != nil {
		return shared, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	shared = &cache{root: root, dir: filepath.Join(os.TempDir(), "muster-testbin"), goTool: goTool()}
	return shared, nil
}

// moduleRoot is the directory of the go.mod above the working directory (a
// test runs in its package's directory), or above this file.
func moduleRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, start := range starts {
		for d := start; ; d = filepath.Dir(d) {
			if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
				if bytes.Contains(data, []byte("module github.com/musterhq/muster\n")) {
					return d, nil
				}
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", errors.New("testbin: no go.mod of github.com/musterhq/muster above the working directory")
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

// cache builds Specs of the module at root into entries under dir.
type cache struct {
	root   string
	dir    string
	goTool string
	keep   int // unused entries of one Spec kept by prune; 0 means defaultKeep

	// Test hooks.
	afterBuild func()   // runs after go build, before the key is checked again
	builds     *counter // counts go build runs
}

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) add() {
	if c != nil {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
}

const defaultKeep = 4

// keyEnv is the environment that changes what go build produces.
var keyEnv = []string{
	"GOFLAGS", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GOEXPERIMENT", "GOROOT", "GOTOOLCHAIN", "GOWORK",
	"CGO_ENABLED", "CC", "CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_LDFLAGS",
}

// key hashes everything s's build depends on: the toolchain and build
// environment, s itself, and every non-test file of the module (more than
// the packages need, which costs a rebuild at worst, never a stale binary).
func (c *cache) key(s Spec) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH, c.goTool)
	if st, err := os.Stat(c.goTool); err == nil {
		fmt.Fprintln(h, st.Size(), st.ModTime().UnixNano())
	}
	for _, k := range keyEnv {
		fmt.Fprintf(h, "%s=%q\n", k, os.Getenv(k))
	}
	fmt.Fprintf(h, "spec %q %q %q %q\n", s.Name, s.Packages, s.Layout, s.Want)
	buf := make([]byte, 64<<10)
	err := filepath.WalkDir(c.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == c.root {
				return nil
			}
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, ".") || !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(c.root, path)
		fmt.Fprintf(h, "\x00%s\x00", filepath.ToSlash(rel))
		_, err = io.CopyBuffer(h, f, buf)
		return err
	})
	if err != nil {
		return "", err
	}
	// A go.work above the module changes which modules the build uses.
	for d := filepath.Dir(c.root); ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.work")); err == nil {
			fmt.Fprintf(h, "go.work %s\n", d)
			h.Write(data)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// held keeps the shared locks of the entries this process uses open (and
// so held) until it exits.
var held []*os.File

// get returns the cache entry for s, building it when it is missing.
//
// Two lock files guard an entry: a process holds a shared lock on
// ENTRY.lock for as long as it may run the binaries (prune removes only
// entries whose lock it can take exclusively), and an exclusive lock on
// ENTRY.build while it builds, so that processes that start together build
// once.
func (c *cache) get(s Spec) (string, error) {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		key, err := c.key(s)
		if err != nil {
			return "", fmt.Errorf("testbin: hash the sources: %w", err)
		}
		entry := filepath.Join(c.dir, s.Name+"-"+key)
		use, err := openLock(entry+".lock", syscall.LOCK_SH)
		if err != nil {
			return "", err
		}
		built := false
		if !complete(entry, s) {
			built, err = c.fill(s, key, entry)
			if errors.Is(err, errChanged) && attempt < 2 {
				use.Close()
				continue
			}
			if err != nil {
				use.Close()
				return "", err
			}
		}
		c.use(entry, use)
		if built {
			c.prune(s, entry)
		}
		return entry, nil
	}
}

var errChanged = errors.New("testbin: the sources keep changing during the build")

// fill builds entry, unless another process built it while this one waited
// for the build lock; it reports whether it built.
func (c *cache) fill(s Spec, key, entry string) (bool, error) {
	lock, err := openLock(entry+".build", syscall.LOCK_EX)
	if err != nil {
		return false, err
	}
	defer lock.Close()
	if complete(entry, s) {
		return false, nil
	}
	tmp, err := c.build(s)
	if err != nil {
		return false, err
	}
	// Sources that changed during the build may or may not be in it: such
	// a build belongs to no key.
	if again, err := c.key(s); err != nil || again != key {
		os.RemoveAll(tmp)
		if err != nil {
			return false, err
		}
		return false, errChanged
	}
	if err := install(tmp, entry); err != nil {
		os.RemoveAll(tmp)
		return false, err
	}
	return true, nil
}

func openLock(path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("testbin: lock %s: %w", path, err)
	}
	return f, nil
}

// use records that this process uses entry: it keeps the entry's shared
// lock and marks it recently used.
func (c *cache) use(entry string, lock *os.File) {
	now := time.Now()
	_ = os.Chtimes(entry, now, now)
	mu.Lock()
	held = append(held, lock)
	mu.Unlock()
}

// install moves a finished build into place; an incomplete entry (a prune
// that was interrupted) is moved aside first.
func install(tmp, entry string) error {
	if _, err := os.Lstat(entry); err == nil {
		old := entry + ".old-" + filepath.Base(tmp)
		if err := os.Rename(entry, old); err != nil {
			return err
		}
		os.RemoveAll(old)
	}
	return os.Rename(tmp, entry)
}

// build runs go build for s into a new temp directory under the cache dir.
func (c *cache) build(s Spec) (string, error) {
	tmp, err := os.MkdirTemp(c.dir, s.Name+".build-")
	if err != nil {
		return "", err
	}
	if err := c.buildInto(s, tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}

func (c *cache) buildInto(s Spec, dir string) error {
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, p := range s.Packages {
		args = append(args, "./"+filepath.ToSlash(p))
	}
	cmd := exec.Command(c.goTool, args...)
	cmd.Dir = c.root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	c.builds.add()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out.Bytes())
	}
	if c.afterBuild != nil {
		c.afterBuild()
	}
	if s.Finish != nil {
		if err := s.Finish(dir); err != nil {
			return fmt.Errorf("testbin: finish %s: %w", s.Name, err)
		}
	}
	if !complete(dir, s) {
		return fmt.Errorf("testbin: the build of %s holds %v, want %v", s.Name, names(dir), want(s))
	}
	return nil
}

func want(s Spec) []string {
	if s.Want != nil {
		return s.Want
	}
	var names []string
	for _, p := range s.Packages {
		names = append(names, filepath.Base(p))
	}
	return names
}

func complete(dir string, s Spec) bool {
	for _, n := range want(s) {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}

// prune removes s's entries that no process holds and that are either
// older than a day or beyond the c.keep most recently used, and builds
// that were abandoned more than an hour ago.
func (c *cache) prune(s Spec, current string) {
	keep := c.keep
	if keep == 0 {
		keep = defaultKeep
	}
	type entry struct {
		path string
		used time.Time
	}
	var entries []entry
	names, _ := filepath.Glob(filepath.Join(c.dir, s.Name+"*"))
	for _, p := range names {
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() || p == current {
			continue
		}
		base := filepath.Base(p)
		switch {
		case strings.HasPrefix(base, s.Name+".build-") || strings.Contains(base, ".old-"):
			if time.Since(st.ModTime()) > time.Hour {
				os.RemoveAll(p)
			}
		case strings.HasPrefix(base, s.Name+"-") && !strings.Contains(strings.TrimPrefix(base, s.Name+"-"), "-"):
			entries = append(entries, entry{p, st.ModTime()})
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].used.After(entries[j].used) })
	for i, e := range entries {
		old := time.Since(e.used) > 24*time.Hour
		if i < keep-1 && !old { // keep-1: current is one of the kept
			continue
		}
		lock, err := os.OpenFile(e.path+".lock", os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(e.path)
			if old {
				// Nobody has used the key for a day; a process that opens
				// the lock file at this instant only builds it again.
				os.Remove(e.path + ".lock")
				os.Remove(e.path + ".build")
			}
		}
		lock.Close()
	}
}

// names lists the files in dir, for error messages.
func names(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
