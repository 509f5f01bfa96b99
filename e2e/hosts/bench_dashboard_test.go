package hosts_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/testing/poll"
)

// TestBenchDashboardHosts measures the dashboard on three hosts: the ssh
// processes it starts while idle for MUSTER_BENCH_IDLE (default 60 s),
// and how long a session started on a host takes to show (median of 5).
// It runs only with MUSTER_BENCH_DASHBOARD=1 and asserts nothing.
func TestBenchDashboardHosts(t *testing.T) {
	if os.Getenv("MUSTER_BENCH_DASHBOARD") == "" {
		t.Skip("a measurement: set MUSTER_BENCH_DASHBOARD=1")
	}
	idle := 60 * time.Second
	if d, err := time.ParseDuration(os.Getenv("MUSTER_BENCH_IDLE")); err == nil {
		idle = d
	}
	srvs := []*server{newServer(t), newServer(t), newServer(t)}
	e := newEnv(t, srvs[0])
	for i, s := range srvs[1:] {
		name := fmt.Sprintf("h%d", i+2)
		known := fmt.Sprintf("%s/known_%s", e.home, name)
		os.WriteFile(known, []byte(fmt.Sprintf("[127.0.0.1]:%d %s\n", s.port, s.hostPub)), 0o600)
		f, _ := os.OpenFile(e.sshConfig, os.O_APPEND|os.O_WRONLY, 0)
		fmt.Fprintf(f, "\nHost %s\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s/id\n  IdentitiesOnly yes\n  GlobalKnownHostsFile /dev/null\n  UserKnownHostsFile %s\n", name, s.port, s.user, s.dir, known)
		f.Close()
	}
	sshRuns := e.sshLog()
	for i := range srvs {
		name := fmt.Sprintf("h%d", i+1)
		e.must("host", "add", name, name)
		e.must("new", "--host", name, "--name", "idle"+name, "-d", "--cmd", "cat")
	}
	e.must("new", "--name", "here", "-d", "--cmd", "cat")
	tm := startTerm(t, append(e.vars, "TERM=xterm-256color"), 160, 40)
	since := func(at int) string { return ansi.Strip(tm.Since(at)) }
	poll.Wait(t, 60*time.Second, func() bool {
		s := since(0)
		return strings.Contains(s, "idleh1") && strings.Contains(s, "idleh2") && strings.Contains(s, "idleh3")
	}, func() string { return "never listed:\n" + since(0) })
	time.Sleep(3 * time.Second) // the first rounds settle
	before := len(sshRuns())
	time.Sleep(idle)
	t.Logf("ssh processes started in %v idle with 3 hosts: %d", idle, len(sshRuns())-before)

	var delays []time.Duration
	for i := range 5 {
		name := fmt.Sprintf("late%d", i)
		at := tm.Mark()
		e.remote("new", "--name", name, "-d", "--cmd", "cat")
		made := time.Now()
		poll.Wait(t, 30*time.Second, func() bool { return strings.Contains(since(at), name) },
			func() string { return "never showed " + name })
		delays = append(delays, time.Since(made))
		time.Sleep(700 * time.Millisecond)
	}
	slices.Sort(delays)
	t.Logf("remote change to dashboard: median %v (all %v)", delays[2].Round(time.Millisecond), delays)
}
