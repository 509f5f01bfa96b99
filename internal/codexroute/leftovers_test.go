package codexroute

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/provider/codex"
)

// detachedDaemonPane starts a fake Codex TUI whose child app-server runs in
// a session of its own (setsid), as Codex 0.169's does, so that ending the
// pane's process group leaves it running. It returns the pane's process
// and the daemon's.
func (e *env) detachedDaemonPane(dir string) (*exec.Cmd, int) {
	e.t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		e.t.Skip("needs setsid")
	}
	cmd := exec.Command("/bin/sh", "-c", `setsid codex app-server --managed-daemon >/dev/null & exec codex`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+e.bin+":/usr/bin:/bin")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	bufio.NewReader(out).ReadString('\n')
	var daemon int
	for i := 0; daemon == 0; i++ {
		if s := SharedPIDs(e.procs, cmd.Process.Pid, codex.Provider{}); len(s) == 1 {
			daemon = s[0]
		} else if i == 500 {
			e.t.Fatal("the fake app-server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if startTime(daemon) != "" {
			syscall.Kill(daemon, syscall.SIGKILL)
		}
	})
	return cmd, daemon
}

func TestLeftoversOutliveNoPane(t *testing.T) {
	e := newEnv(t)
	w := e.dir("repo")
	pane1, daemon := e.detachedDaemonPane(w)
	other := e.pane("p2", w, "", true)
	l := NewLeftovers(e.procs, codex.Provider{})

	l.PaneClosing(pane1.Process.Pid)
	syscall.Kill(-pane1.Process.Pid, syscall.SIGKILL)
	pane1.Wait()
	if startTime(daemon) == "" {
		t.Fatal("the fake daemon died with its pane: the test proves nothing")
	}
	// Another pane still runs Codex, which may be the daemon's client.
	if got := l.Reap([]int{other.PID}); len(got) != 0 || startTime(daemon) == "" {
		t.Fatalf("Reap with a Codex pane left ended %v", got)
	}
	// A pane without Codex does not keep it.
	shell := e.shellPane("p3", w)
	if got := l.Reap([]int{shell.PID}); !slices.Equal(got, []int{daemon}) {
		t.Fatalf("Reap with no Codex pane left ended %v, want the daemon %d", got, daemon)
	}
	if startTime(daemon) != "" {
		t.Fatal("the daemon outlived Reap")
	}
	if got := l.Reap(nil); len(got) != 0 {
		t.Fatalf("a second Reap ended %v", got)
	}
}

func TestLeftoversIgnoreOwnAgents(t *testing.T) {
	e := newEnv(t)
	p := e.pane("p1", e.dir("repo"), "", true)
	l := NewLeftovers(e.procs, codex.Provider{})
	l.PaneClosing(p.PID)
	if got := l.Reap(nil); len(got) != 0 {
		t.Fatalf("Reap ended %v: a pane's own Codex is not a shared process", got)
	}
}
