package hosts_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/musterhq/muster/internal/testing/poll"
)

// freeze stops (SIGSTOP) the sshd listener and every sshd process of the
// host's user, the ones carrying its connections: the TCP connections
// stay open and say nothing, as over a pulled cable. It returns what
// thaw continues.
func (s *server) freeze() []int {
	pids := []int{s.cmd.Process.Pid}
	syscall.Kill(s.cmd.Process.Pid, syscall.SIGSTOP)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.Stat("/proc/" + e.Name())
		if err != nil || int(st.Sys().(*syscall.Stat_t).Uid) != s.uid || !strings.HasPrefix(comm(pid), "sshd") {
			continue
		}
		syscall.Kill(pid, syscall.SIGSTOP)
		pids = append(pids, pid)
	}
	return pids
}

func thaw(pids []int) {
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGCONT)
	}
}

// TestAttachNoticesASilentLink: the link under `muster attach h1:x` goes
// silent (sshd stopped, its connections open); the client says so within
// seconds, not after ssh's 45 s keepalive, and attaches again once sshd
// answers again, showing live output.
func TestAttachNoticesASilentLink(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--host", "h1", "--name", "ticker", "-d", "--cmd", `i=0; while :; do i=$((i+1)); echo "tick-$i"; sleep 0.1; done`)

	tm := startTerm(t, e.vars, 100, 30, "attach", "h1:ticker")
	mark, since := tm.Mark, tm.Since
	poll.Wait(t, 20*time.Second, func() bool { return strings.Contains(since(0), "tick-") }, func() string { return "never attached: " + since(0) })

	at := mark()
	frozen := srv.freeze()
	defer thaw(frozen)
	froze := time.Now()
	// ssh's keepalive would take 45 s; the deadline leaves room for a
	// loaded machine and still fails without the heartbeat.
	poll.Wait(t, 25*time.Second, func() bool { return strings.Contains(since(at), "stopped answering; attaching again") },
		func() string { return "the client never said the link went silent: " + since(at) })
	t.Logf("silent link noticed %v after the freeze", time.Since(froze).Round(time.Millisecond))

	// sshd answers again (its old connections stay frozen: the attach
	// comes back over a new one).
	syscall.Kill(srv.cmd.Process.Pid, syscall.SIGCONT)
	back := mark()
	poll.Wait(t, 30*time.Second, func() bool {
		s := since(back)
		i := strings.LastIndex(s, "\x1b[?1049h")
		return i >= 0 && strings.Contains(s[i:], "tick-")
	}, func() string { return "no live output after sshd answered again: " + since(at) })
	if !tm.Running() {
		t.Fatal("attach exited")
	}
	tm.Detach(t)
}

// TestDashboardNoticesASilentLink: the dashboard follows h1 over one watch
// stream, which carries nothing while nothing changes; when the link goes
// silent (sshd and its connections stopped) the dashboard must still say
// h1 is unreachable well before ssh's 45 s keepalive would end the stream,
// and follow it again once sshd answers.
func TestDashboardNoticesASilentLink(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--host", "h1", "--name", "early", "-d", "--cmd", "cat")

	tm := startTerm(t, append(e.vars, "TERM=xterm-256color"), 160, 40)
	since := func(at int) string { return ansi.Strip(tm.Since(at)) }
	poll.Wait(t, 30*time.Second, func() bool { return strings.Contains(since(0), "early") },
		func() string { return "the dashboard never listed h1:early:\n" + since(0) })

	at := tm.Mark()
	frozen := srv.freeze()
	defer thaw(frozen)
	froze := time.Now()
	// The deadline leaves room for a loaded machine and still fails
	// without the heartbeat: ssh's keepalive takes at least 45 s.
	poll.Wait(t, 40*time.Second, func() bool { return strings.Contains(since(at), "h1 unreachable") },
		func() string { return "the dashboard never said h1 is unreachable:\n" + since(at) })
	t.Logf("silent link shown unreachable %v after the freeze", time.Since(froze).Round(time.Millisecond))

	thaw(frozen)
	at = tm.Mark()
	e.remote("new", "--name", "back", "-d", "--cmd", "cat")
	poll.Wait(t, 40*time.Second, func() bool { return strings.Contains(since(at), "back") },
		func() string { return "the dashboard never showed h1:back after sshd answered again:\n" + since(at) })
	if !tm.Running() {
		t.Fatal("the dashboard exited")
	}
}
