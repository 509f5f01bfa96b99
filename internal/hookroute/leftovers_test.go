package hookroute

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	// The app-server names its own pid: a walk of the tree while it
	// starts can meet a transient fork of it (its `sleep` before exec),
	// which looks like the app-server and is gone a moment later.
	pidFile := filepath.Join(dir, "app-server.pid")
	cmd := exec.Command("/bin/sh", "-c", `FAKE_PIDFILE="$P" setsid codex app-server --managed-daemon >/dev/null & exec codex`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+e.bin+":/usr/bin:/bin", "P="+pidFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	bufio.NewReader(out).ReadString('\n')
	var daemon int
	for i := 0; daemon == 0; i++ {
		b, _ := os.ReadFile(pidFile)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && slices.Contains(SharedPIDs(e.procs, cmd.Process.Pid, codex.Provider{}), pid) {
			daemon = pid
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

// TestWatchEndsTheDaemonOfAnExitedTUI: a Codex TUI that exits by itself
// (the pane's shell lives on) leaves its detached app-server behind; Watch
// noted it while the TUI ran and ends it once no pane runs Codex, but not
// while one does.
func TestWatchEndsTheDaemonOfAnExitedTUI(t *testing.T) {
	e := newEnv(t)
	w := e.dir("repo")
	tui, daemon := e.detachedDaemonPane(w)
	shell := e.shellPane("p3", w)
	other := e.pane("p2", w, "", true)
	l := NewLeftovers(e.procs, codex.Provider{})
	var mu sync.Mutex
	roots := []int{tui.Process.Pid, shell.PID, other.PID}
	setRoots := func(r ...int) {
		mu.Lock()
		roots = r
		mu.Unlock()
	}
	ended := make(chan []int, 4)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Watch(ctx, 5*time.Millisecond, func() []int {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(roots)
		}, func(p []int) { ended <- p })
	}()
	t.Cleanup(func() { cancel(); <-done })
	// Noted while the TUI runs.
	for i := 0; ; i++ {
		l.mu.Lock()
		n := len(l.held)
		l.mu.Unlock()
		if n == 1 {
			break
		}
		if i == 1000 {
			t.Fatal("Watch did not note the app-server")
		}
		time.Sleep(5 * time.Millisecond)
	}
	syscall.Kill(-tui.Process.Pid, syscall.SIGKILL)
	tui.Wait()
	// Another pane's Codex may be its client: it stays.
	setRoots(shell.PID, other.PID)
	for range 20 {
		select {
		case p := <-ended:
			t.Fatalf("Watch ended %v while a pane ran Codex", p)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if startTime(daemon) == "" {
		t.Fatal("the app-server died with the TUI or was ended: the test proves nothing")
	}
	setRoots(shell.PID)
	select {
	case p := <-ended:
		if !slices.Equal(p, []int{daemon}) {
			t.Fatalf("Watch ended %v, want the app-server %d", p, daemon)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Watch did not end the app-server once no pane ran Codex")
	}
	if startTime(daemon) != "" {
		t.Fatal("the app-server outlived Watch's Reap")
	}
}
