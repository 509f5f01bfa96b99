package core_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// daemonPIDs lists the muster daemons of this home that are alive (a
// zombie is not), read from /proc.
func (e *env) daemonPIDs() []int {
	e.t.Helper()
	dirs, _ := os.ReadDir("/proc")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte("\x00daemon\x00--foreground")) {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil || !bytes.Contains(environ, []byte("MUSTER_HOME="+e.home+"\x00")) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat")); err == nil {
			if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// daemonPID is the pid of the one running daemon.
func (e *env) daemonPID() int {
	e.t.Helper()
	var pid int
	if !eventually(func() bool {
		pids := e.daemonPIDs()
		if len(pids) == 1 {
			pid = pids[0]
		}
		return len(pids) == 1
	}) {
		e.t.Fatalf("daemons of this home: %v; want exactly one", e.daemonPIDs())
	}
	return pid
}

// TestDaemonSignals: SIGHUP and SIGUSR1 are ignored; SIGQUIT stops the
// daemon the clean way, hanging its panes up (issue 22 item 14: all three
// killed it and left the panes' programs running).
func TestDaemonSignals(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "a", "--detach", "--cmd", "sh")
	pid := e.daemonPID()
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGUSR1} {
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
		e.must("ls")
		if got := e.daemonPID(); got != pid {
			t.Fatalf("after %v the daemon is %d, not %d", sig, got, pid)
		}
	}
	shell := e.session("a").PID
	if shell == 0 {
		t.Fatal("no pid for the pane's shell")
	}
	if err := syscall.Kill(pid, syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return len(e.daemonPIDs()) == 0 }) {
		t.Fatal("the daemon did not stop on SIGQUIT")
	}
	if syscall.Kill(shell, 0) == nil {
		t.Errorf("the pane's shell %d outlived the daemon stopped by SIGQUIT", shell)
	}
	log, _ := os.ReadFile(filepath.Join(e.home, "state", "daemon.log"))
	if !strings.Contains(string(log), `"msg":"stopping on signal","signal":"quit"`) || !strings.Contains(string(log), `"msg":"daemon stopped"`) {
		t.Errorf("daemon.log does not show a clean stop on SIGQUIT:\n%s", log)
	}
}
