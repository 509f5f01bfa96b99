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

// TestLeftoversEndTheDaemonsCompanions: Codex 0.171's app-server starts
// its pid-update-loop with PPID 1, out of every pane's tree, so it is
// never noted; ending the daemon must end it too. The family is the
// agent's own executable: a process of it that is not shared, and a
// shared one run by another executable, are left alone.
func TestLeftoversEndTheDaemonsCompanions(t *testing.T) {
	e := newEnv(t)
	// A real executable named codex (a copy of sh), so that /proc's exe
	// names the agent as the installed daemon's does.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("needs sh")
	}
	dir := t.TempDir()
	agent := filepath.Join(dir, "codex")
	b, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agent, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// Each process blocks reading a pipe the test holds: nothing forks.
	start := func(setsid bool, path string, args ...string) int {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(path, args...)
		cmd.Stdin = r
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid, Setpgid: !setsid}
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
	daemon := start(false, agent, "-c", "read x", "app-server", "--managed-daemon")
	loop := start(true, agent, "-c", "read x", "app-server", "daemon", "pid-update-loop")
	tui := start(true, agent, "-c", "read x", "resume")
	other := start(true, filepath.Join(e.bin, "codex"), "app-server", "--managed-daemon")
	for _, pid := range []int{daemon, loop, tui, other} {
		for i := 0; startTime(pid) == ""; i++ {
			if i == 500 {
				t.Fatalf("process %d did not start", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	l := NewLeftovers(e.procs, codex.Provider{})
	l.PaneClosing(daemon)
	got := l.Reap(nil)
	if !slices.Contains(got, daemon) || !slices.Contains(got, loop) {
		t.Fatalf("Reap ended %v, want the daemon %d and its pid-update-loop %d", got, daemon, loop)
	}
	for _, pid := range []int{tui, other} {
		if slices.Contains(got, pid) || startTime(pid) == "" {
			t.Fatalf("Reap ended %d (ended %v): not of the daemon's family", pid, got)
		}
	}
	if startTime(loop) != "" {
		t.Fatal("the pid-update-loop outlived Reap")
	}
}
