package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/paths"
)

// module writes a small module with two commands that print msg.
func module(t *testing.T, msg string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":              "module example.com/tb\n\ngo 1.22\n",
		"internal/msg/msg.go": "package msg\n\nconst Text = " + `"` + msg + `"` + "\n",
		"cmd/hello/main.go":   "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/tb/internal/msg\"\n)\n\nfunc main() { fmt.Println(\"hello\", msg.Text) }\n",
		"cmd/other/main.go":   "package main\n\nfunc main() {}\n",
	}
	for name, body := range files {
		write(t, filepath.Join(root, name), body)
	}
	return root
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

var helloSpec = Spec{Name: "hello", Packages: []string{"cmd/hello", "cmd/other"}}

func newCache(root, dir string) *cache {
	return &cache{root: root, dir: dir, goTool: goTool(), builds: &counter{}}
}

func run(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(dir, "hello")).Output()
	if err != nil {
		t.Fatalf("run hello: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func get(t *testing.T, c *cache, s Spec) string {
	t.Helper()
	dir, err := c.get(s)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCacheReusesAndRebuildsOnChange: a second process reuses the build;
// a source change builds afresh; a test file does not.
func TestCacheReusesAndRebuildsOnChange(t *testing.T) {
	root, dir := module(t, "v1"), t.TempDir()
	first := newCache(root, dir)
	d1 := get(t, first, helloSpec)
	if got := run(t, d1); got != "hello v1" {
		t.Fatalf("hello printed %q", got)
	}
	if _, err := os.Stat(filepath.Join(d1, "other")); err != nil {
		t.Fatalf("other is not beside hello: %v", err)
	}

	second := newCache(root, dir) // another test process
	if d := get(t, second, helloSpec); d != d1 || second.builds.n != 0 {
		t.Fatalf("second process got %s after %d builds, want %s after none", d, second.builds.n, d1)
	}

	write(t, filepath.Join(root, "internal/msg/msg_test.go"), "package msg\n")
	if d := get(t, newCache(root, dir), helloSpec); d != d1 {
		t.Fatalf("a test file changed the entry: %s, want %s", d, d1)
	}

	write(t, filepath.Join(root, "internal/msg/msg.go"), "package msg\n\nconst Text = \"v2\"\n")
	third := newCache(root, dir)
	d2 := get(t, third, helloSpec)
	if d2 == d1 || third.builds.n != 1 {
		t.Fatalf("after a change: %s after %d builds, want a new entry after one", d2, third.builds.n)
	}
	if got := run(t, d2); got != "hello v2" {
		t.Fatalf("hello printed %q after the change", got)
	}
}

// TestConcurrentProcessesBuildOnce: test processes that start together
// wait for one build instead of each running go build.
func TestConcurrentProcessesBuildOnce(t *testing.T) {
	root, dir := module(t, "v1"), t.TempDir()
	var builds counter
	var wg sync.WaitGroup
	dirs := make([]string, 4)
	errs := make([]error, 4)
	for i := range dirs {
		wg.Go(func() {
			c := newCache(root, dir) // each opens the lock file anew, as a process would
			c.builds = &builds
			dirs[i], errs[i] = c.get(helloSpec)
		})
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if dirs[i] != dirs[0] {
			t.Fatalf("processes got %v", dirs)
		}
	}
	if builds.n != 1 {
		t.Fatalf("%d go builds, want 1", builds.n)
	}
}

// TestChangeDuringBuildIsNotCached: a build that may hold half of an edit
// is thrown away and the edited sources are built.
func TestChangeDuringBuildIsNotCached(t *testing.T) {
	root, dir := module(t, "v1"), t.TempDir()
	c := newCache(root, dir)
	c.afterBuild = func() {
		c.afterBuild = nil
		write(t, filepath.Join(root, "internal/msg/msg.go"), "package msg\n\nconst Text = \"edited\"\n")
	}
	d := get(t, c, helloSpec)
	if got := run(t, d); got != "hello edited" || c.builds.n != 2 {
		t.Fatalf("hello printed %q after %d builds, want the edit after 2", got, c.builds.n)
	}
	if ents := entries(t, dir); len(ents) != 1 || ents[0] != filepath.Base(d) {
		t.Fatalf("cache holds %v, want only the edited build", ents)
	}
}

// entries lists the directories in the cache dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestKeyFollowsBuildEnvironment: the variables that change go build's
// output change the key.
func TestKeyFollowsBuildEnvironment(t *testing.T) {
	c := newCache(module(t, "v1"), t.TempDir())
	k1, err := c.key(helloSpec)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOFLAGS", "-tags=extra")
	k2, _ := c.key(helloSpec)
	t.Setenv("GOFLAGS", "")
	k3, _ := c.key(Spec{Name: "hello", Packages: []string{"cmd/hello"}})
	k4, _ := c.key(Spec{Name: "hello", Packages: helloSpec.Packages, Layout: "2"})
	if k1 == k2 || k1 == k3 || k1 == k4 {
		t.Fatalf("keys %s %s %s %s, want all different", k1, k2, k3, k4)
	}
	if again, _ := c.key(helloSpec); again != k1 {
		t.Fatalf("key changed from %s to %s with nothing changed", k1, again)
	}
}

// TestFinish: Finish adds to the directory before it is installed, and a
// directory without what Want lists is not complete.
func TestFinish(t *testing.T) {
	root, dir := module(t, "v1"), t.TempDir()
	s := Spec{Name: "linked", Packages: []string{"cmd/hello"}, Want: []string{"hello", "hi"}, Layout: "1",
		Finish: func(dir string) error { return os.Symlink("hello", filepath.Join(dir, "hi")) }}
	d := get(t, newCache(root, dir), s)
	out, err := exec.Command(filepath.Join(d, "hi")).Output()
	if err != nil || strings.TrimSpace(string(out)) != "hello v1" {
		t.Fatalf("hi: %q, %v", out, err)
	}
	s.Finish = nil
	s.Layout = "2"
	if _, err := newCache(root, dir).get(s); err == nil || !strings.Contains(err.Error(), "want [hello hi]") {
		t.Fatalf("build without the link: %v, want an error naming what is missing", err)
	}
}

// TestPruneSparesHeldAndRecentEntries: entries another process holds are
// never removed; of the rest, the most recently used stay.
func TestPruneSparesHeldAndRecentEntries(t *testing.T) {
	dir := t.TempDir()
	c := &cache{dir: dir, keep: 3}
	now := time.Now()
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		write(t, filepath.Join(p, "hello"), "")
		write(t, p+".lock", "")
		write(t, p+".build", "")
		os.Chtimes(p, now.Add(-age), now.Add(-age))
		return p
	}
	current := mk("hello-0000", 0)
	recent := mk("hello-1111", time.Minute)
	recent2 := mk("hello-2222", 2*time.Minute)
	older := mk("hello-3333", time.Hour)
	held := mk("hello-4444", 2*time.Hour)
	stale := mk("hello-5555", 48*time.Hour)
	other := mk("hello-world-6666", 48*time.Hour) // another Spec's entry
	abandoned := mk("hello.build-123", 2*time.Hour)
	lock, err := os.Open(held + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}

	c.prune(Spec{Name: "hello"}, current)
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	for _, p := range []string{current, recent, recent2, held, other} {
		if !exists(p) {
			t.Errorf("prune removed %s", filepath.Base(p))
		}
	}
	for _, p := range []string{older, stale, abandoned} {
		if exists(p) {
			t.Errorf("prune kept %s", filepath.Base(p))
		}
	}
	if !exists(older+".lock") || exists(stale+".lock") || exists(stale+".build") {
		t.Errorf("prune should keep the lock file of a recent key and remove a day-old one")
	}
}

// TestMuster: the muster binary comes with muster-hook beside it, so hook
// setup installs the helper.
func TestMuster(t *testing.T) {
	bin := Muster(t)
	if filepath.Base(bin) != "muster" {
		t.Fatalf("Muster = %s", bin)
	}
	if paths.HookHelper(bin) == "" {
		t.Fatalf("no %s beside %s", paths.HookHelperName, bin)
	}
	cmd := exec.Command(bin, "--help")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "MUSTER_HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("muster --help: %v\n%s", err, out)
	}
	if again := Muster(t); again != bin {
		t.Fatalf("second Muster = %s, want %s", again, bin)
	}
}

func BenchmarkKey(b *testing.B) {
	c, err := defaultCache()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := c.key(MusterSpec); err != nil {
			b.Fatal(err)
		}
	}
}
