package core_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestConcurrentClientsAfterCrash: after the daemon is killed with
// SIGKILL, eight commands started at once all succeed, and exactly one
// new daemon serves them (issue 21: the first ones used to fail with
// "connection reset by peer", having reached the dying daemon).
func TestConcurrentClientsAfterCrash(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "a", "--detach", "--cmd", "sh")
	for round := range 5 {
		old := e.daemonPID()
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		results := make([]result, 8)
		for i := range results {
			wg.Go(func() { results[i] = e.run("ls") })
		}
		wg.Wait()
		for i, r := range results {
			if r.code != 0 || !strings.Contains(r.stdout, "a") {
				t.Errorf("round %d, ls %d: exit %d\nstdout: %s\nstderr: %s", round, i, r.code, r.stdout, r.stderr)
			}
		}
		if pid := e.daemonPID(); pid == old {
			t.Fatalf("round %d: the killed daemon %d still counts as running", round, old)
		}
	}
}

// TestStoppedDaemonCommandsEnd: with the daemon stopped by SIGSTOP, every
// command ends with an error naming the daemon's socket instead of
// hanging (issue 22 item 8).
func TestStoppedDaemonCommandsEnd(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "a", "--detach", "--cmd", "sh")
	pid := e.daemonPID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	cmds := [][]string{{"ls"}, {"capture", "a"}, {"send", "a", "x"}, {"daemon", "status"}, {"daemon", "stop"}}
	results := make([]result, len(cmds))
	var wg sync.WaitGroup
	for i, args := range cmds {
		wg.Go(func() { results[i] = e.run(args...) })
	}
	wg.Wait()
	sock := filepath.Join(e.home, "run", "control.sock")
	for i, r := range results {
		if r.code == 0 || !strings.Contains(r.stderr, "did not answer") || !strings.Contains(r.stderr, sock) || !strings.Contains(r.stderr, strconv.Itoa(pid)) {
			t.Errorf("muster %v against a stopped daemon: exit %d, stderr %q; want an error naming %s and pid %d", cmds[i], r.code, r.stderr, sock, pid)
		}
	}
}

// TestBrokenStartSaysWhy: a daemon that cannot start says why through
// the command that started it, at once, instead of "see daemon.log"
// after 10 s; a corrupt database is moved aside with a line naming the
// backup (issue 22 item 6).
func TestBrokenStartSaysWhy(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "a", "--detach", "--cmd", "sh")
	e.must("daemon", "stop", "--force")
	db := filepath.Join(e.home, "state", "muster.db")

	// Zero length: three sessions used to vanish with ls exiting 0.
	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	os.Remove(db + "-wal")
	r := e.run("ls")
	if r.code != 0 || !strings.Contains(r.stderr, "the database was corrupt (it is empty (zero length)): moved it to "+db+".corrupt-") {
		t.Fatalf("ls over an empty muster.db: exit %d, stderr %q; want the database moved aside, named", r.code, r.stderr)
	}
	e.must("daemon", "stop", "--force")

	// A FIFO where the database goes: the reason, not a hang.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(db + suffix)
	}
	if err := syscall.Mkfifo(db, 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.run("ls")
	if r.code == 0 || !strings.Contains(r.stderr, "the daemon could not start") || !strings.Contains(r.stderr, "not a regular file but a FIFO") {
		t.Fatalf("ls with a FIFO for muster.db: exit %d, stderr %q; want why the daemon could not start", r.code, r.stderr)
	}
	os.Remove(db)

	// A stuck daemon holding the lock, its socket gone: named, with its pid.
	e.must("ls")
	pid := e.daemonPID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(e.home, "run", "control.sock"))
	r = e.run("ls")
	syscall.Kill(pid, syscall.SIGCONT)
	if r.code == 0 || !strings.Contains(r.stderr, "(pid "+strconv.Itoa(pid)+") holds this home's lock") {
		t.Fatalf("ls beside a stuck daemon: exit %d, stderr %q; want the stuck daemon named", r.code, r.stderr)
	}
	syscall.Kill(pid, syscall.SIGTERM)
}
