package hookroute

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/provider/codex"
)

// TestLeftoversFindMarkedSharedProcesses: Codex 0.171 runs its app-server
// and pid-update-loop with PPID 1 at once, so no walk of a pane's tree
// may ever meet them; they carry the pane's environment, and that is how
// they are known. A shared process of another daemon (another mark) or of
// none (Codex run outside Muster), and an agent that is not shared, are
// left alone, and nothing is ended while a pane runs Codex.
func TestLeftoversFindMarkedSharedProcesses(t *testing.T) {
	e := newEnv(t)
	// A real executable named codex (a copy of sh), so that /proc names
	// the agent as the installed daemon's does.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("needs sh")
	}
	agent := filepath.Join(t.TempDir(), "codex")
	b, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agent, b, 0o755); err != nil {
		t.Fatal(err)
	}
	const key = "MUSTER_EVENT_SOCKET"
	ours := "/tmp/ours/events.sock"
	// Each process blocks reading a pipe the test holds, in a session of
	// its own (no pane's tree holds it).
	start := func(mark string, args ...string) int {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(agent, append([]string{"-c", "read x"}, args...)...)
		cmd.Stdin = r
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		if mark != "" {
			cmd.Env = append(cmd.Env, key+"="+mark)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		t.Cleanup(func() {
			syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			w.Close()
		})
		return cmd.Process.Pid
	}
	daemon := start(ours, "app-server", "--managed-daemon")
	loop := start(ours, "app-server", "daemon", "pid-update-loop")
	tui := start(ours, "resume")
	theirs := start("/tmp/theirs/events.sock", "app-server", "--managed-daemon")
	unmarked := start("", "app-server", "--managed-daemon")
	for _, pid := range []int{daemon, loop, tui, theirs, unmarked} {
		for i := 0; startTime(pid) == ""; i++ {
			if i == 500 {
				t.Fatalf("process %d did not start", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	l := NewLeftovers(e.procs, codex.Provider{})
	l.Mark = EnvVar{Key: key, Value: ours}
	pane := e.pane("p1", e.dir("repo"), "", true)
	if got := l.Reap([]int{pane.PID}); len(got) != 0 {
		t.Fatalf("Reap ended %v while a pane ran Codex", got)
	}
	got := l.Reap(nil)
	slices.Sort(got)
	want := []int{daemon, loop}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Reap ended %v, want the marked app-server %d and its pid-update-loop %d", got, daemon, loop)
	}
	for _, pid := range want {
		if startTime(pid) != "" {
			t.Fatalf("%d outlived Reap", pid)
		}
	}
	for _, pid := range []int{tui, theirs, unmarked} {
		if startTime(pid) == "" {
			t.Fatalf("Reap ended %d: not a shared process of ours", pid)
		}
	}
}

// BenchmarkNoteMarked is the cost of one of Watch's marked scans over
// this machine's processes (reported per process too).
func BenchmarkNoteMarked(b *testing.B) {
	l := NewLeftovers(nil, codex.Provider{})
	l.Mark = EnvVar{Key: "MUSTER_EVENT_SOCKET", Value: "/nonexistent/events.sock"}
	pids, _ := l.procs.PIDs()
	for b.Loop() {
		l.noteMarked()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(max(len(pids), 1)), "ns/process")
	b.ReportMetric(float64(len(pids)), "processes")
}
