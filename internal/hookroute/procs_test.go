package hookroute

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestProcFSReadsRealProcesses reads a real process: its argv longer than
// one read, its name, and a child it forks.
func TestProcFSReadsRealProcesses(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs a Linux /proc")
	}
	long := strings.Repeat("x", 3000)
	cmd := exec.Command("sh", "-c", "sleep 60; :", long)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	var p ProcFS
	var kids []int
	for deadline := time.Now().Add(10 * time.Second); len(kids) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		kids, _ = p.Children(pid)
	}
	if len(kids) != 1 {
		t.Fatalf("children of sh: %v, want its sleep", kids)
	}
	if comm, _, err := p.Name(kids[0]); err != nil || comm != "sleep" {
		t.Errorf("name of the child: %q, %v", comm, err)
	}
	argv, err := p.Cmdline(pid)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sh", "-c", "sleep 60; :", long}; !slices.Equal(argv, want) {
		t.Errorf("argv: %d words, last %d bytes; want %d words, last %d bytes", len(argv), len(argv[len(argv)-1]), len(want), len(long))
	}
	if _, err := p.Cmdline(1 << 30); err == nil {
		t.Error("no error for a process that does not exist")
	}
}
