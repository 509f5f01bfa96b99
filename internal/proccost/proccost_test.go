package proccost

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// writeProc writes a fake /proc entry with the fields Sample reads.
func writeProc(t *testing.T, dir string, pid, ppid int, utime, cutime, start uint64, rssPages int64, pssKB int64) {
	t.Helper()
	d := filepath.Join(dir, fmt.Sprint(pid))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime prio nice threads itreal
	// starttime vsize rss
	line := fmt.Sprintf("%d (a (b) c) S %d 1 1 0 -1 0 0 0 0 0 %d 0 %d 0 20 0 1 0 %d 1000 %d 0 0\n", pid, ppid, utime, cutime, start, rssPages)
	if err := os.WriteFile(filepath.Join(d, "stat"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if pssKB > 0 {
		rollup := fmt.Sprintf("00400000-7fff [rollup]\nRss:  100 kB\nPss:  %d kB\n", pssKB)
		if err := os.WriteFile(filepath.Join(d, "smaps_rollup"), []byte(rollup), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSampleAttributesTreesFromOneWalk(t *testing.T) {
	dir := t.TempDir()
	writeProc(t, dir, 1, 0, 0, 0, 1, 10, 0)
	writeProc(t, dir, 100, 1, 5, 0, 50, 100, 200) // pane a's root
	writeProc(t, dir, 101, 100, 5, 0, 51, 50, 100)
	writeProc(t, dir, 102, 101, 5, 0, 52, 25, 0) // grandchild, PSS unreadable
	writeProc(t, dir, 200, 1, 5, 0, 60, 300, 0)  // pane b's root
	writeProc(t, dir, 300, 1, 5, 0, 70, 999, 0)  // in no pane
	s := &Sampler{Proc: dir}
	got, err := s.Sample(map[string]int{"a": 100, "b": 200, "gone": 400}, time.Unix(1000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["gone"]; ok {
		t.Errorf("a root that does not exist got a cost: %+v", got["gone"])
	}
	a := got["a"]
	if a.Processes != 3 || a.RSSBytes != 175*pageSize || a.PSSBytes != 300*1024 || a.CPUPercent != -1 {
		t.Errorf("a = %+v; want 3 processes, RSS 175 pages, PSS 300 kB, CPU -1 (first sample)", a)
	}
	if b := got["b"]; b.Processes != 1 || b.RSSBytes != 300*pageSize {
		t.Errorf("b = %+v; want its root alone", b)
	}
}

func TestSampleCPUCountsReapedChildrenOnce(t *testing.T) {
	dir := t.TempDir()
	writeProc(t, dir, 100, 1, 10, 0, 50, 1, 0)
	writeProc(t, dir, 101, 100, 50, 0, 51, 1, 0)
	s := &Sampler{Proc: dir}
	t0 := time.Unix(1000, 0)
	if _, err := s.Sample(map[string]int{"a": 100}, t0); err != nil {
		t.Fatal(err)
	}
	// One second later the child has run 20 ticks more, ended, and the
	// root reaped it: its 70 ticks moved to the root's cutime.
	if err := os.RemoveAll(filepath.Join(dir, "101")); err != nil {
		t.Fatal(err)
	}
	writeProc(t, dir, 100, 1, 10, 70, 50, 1, 0)
	// A process born during the interval counts all its time.
	writeProc(t, dir, 102, 100, 30, 0, 120, 1, 0)
	got, err := s.Sample(map[string]int{"a": 100}, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if c := got["a"].CPUPercent; c != 50 {
		t.Errorf("CPU = %v%%; want 50%% (20 ticks of the reaped child, 30 of the new one, in 1 s at 100 Hz)", c)
	}
}

func TestSampleRealTree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real processes")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	// A shell with a sleeping child and a busy loop.
	cmd := exec.Command("sh", "-c", "sleep 60 & while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s := &Sampler{}
	roots := map[string]int{"tree": cmd.Process.Pid}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := s.Sample(roots, time.Now()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		got, err := s.Sample(roots, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		c := got["tree"]
		if c.Processes >= 2 && c.RSSBytes > 0 && c.CPUPercent > 5 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tree = %+v; want 2+ processes, some RSS and a busy CPU", c)
		}
	}
}

// BenchmarkSample is one sample of this machine's /proc with the test's
// own process as the one pane root (the walk reads every process either
// way); PSS is read on one sample in six, as the daemon does.
func BenchmarkSample(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("no /proc here")
	}
	s := &Sampler{PSSEvery: 6}
	roots := map[string]int{"self": os.Getpid()}
	for b.Loop() {
		if _, err := s.Sample(roots, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
