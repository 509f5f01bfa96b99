package procfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseStat(t *testing.T) {
	// A command name may hold spaces and parentheses.
	line := "4242 (my) (prog) x) S 1 4242 4240 34816 4242 4194560 100 0 0 0 7 3 11 5 20 0 1 0 123456 10000000 250 18446744073709551615"
	st, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PID: 4242, Comm: "my) (prog) x", State: 'S', PPID: 1, PGRP: 4242, Session: 4240, UTime: 7, STime: 3, CUTime: 11, CSTime: 5, StartTime: 123456, RSSPages: 250}
	if st != want {
		t.Errorf("ParseStat = %+v, want %+v", st, want)
	}
	for _, bad := range []string{"", "42 no parens", "x (a) S 1 2 3", "42 (a) S 1"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) accepted", bad)
		}
	}
}

// TestThisProcess reads the test's own process and a child it starts.
func TestThisProcess(t *testing.T) {
	var fs FS
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), "PROCFS_TEST=marker")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	st, err := fs.Stat(pid)
	if err != nil || st.PPID != os.Getpid() || st.StartTime == 0 {
		t.Fatalf("Stat(child) = %+v, %v", st, err)
	}
	if kids, err := fs.Children(os.Getpid()); err != nil || !slices.Contains(kids, pid) {
		t.Errorf("Children(self) = %v, %v; want %d among them", kids, err, pid)
	}
	if tree := fs.Tree(os.Getpid(), 100); tree[0] != os.Getpid() || !slices.Contains(tree, pid) {
		t.Errorf("Tree(self) = %v", tree)
	}
	if v, err := fs.Environ(pid, "PROCFS_TEST"); err != nil || v != "marker" {
		t.Errorf("Environ = %q, %v", v, err)
	}
	// /proc/PID/cmdline can lag an exec by a moment: poll for it.
	argv, _ := fs.Cmdline(pid)
	for i := 0; i < 100 && (len(argv) != 2 || argv[0] != "sleep"); i++ {
		argv, _ = fs.Cmdline(pid)
	}
	if len(argv) != 2 || argv[1] != "30" {
		t.Errorf("Cmdline = %q", argv)
	}
	if comm, err := fs.Comm(pid); err != nil || comm == "" {
		t.Errorf("Comm = %q, %v", comm, err)
	}
	if cwd, err := fs.Cwd(os.Getpid()); err != nil || cwd == "" {
		t.Errorf("Cwd = %q, %v", cwd, err)
	}
	seen := false
	fs.Each(func(s Stat) { seen = seen || s.PID == pid })
	if !seen {
		t.Error("Each did not see the child")
	}
	if _, err := fs.Stat(1 << 30); err == nil {
		t.Error("Stat of no process succeeded")
	}
}

// TestReadBytesGrowsWithReads: rchar counts what the process read, so a
// read of a known size moves it by at least that.
func TestReadBytesGrowsWithReads(t *testing.T) {
	var fs FS
	if _, err := os.Stat("/proc/self/io"); err != nil {
		t.Skip("no /proc/PID/io here")
	}
	before, err := fs.ReadBytes(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(f, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(f); err != nil {
		t.Fatal(err)
	}
	after, err := fs.ReadBytes(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 1<<20 {
		t.Fatalf("ReadBytes grew by %d after reading 1 MiB", after-before)
	}
	if _, err := (FS{Root: t.TempDir()}).ReadBytes(1); err == nil {
		t.Fatal("ReadBytes of a process that is not there succeeded")
	}
}
