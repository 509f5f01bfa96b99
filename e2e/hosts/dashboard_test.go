package hosts_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/testing/poll"
)

// TestDashboardShowsHosts runs the dashboard in a real PTY: a host's
// session is listed beside this machine's under a HOST column; when the
// host's sshd stops the dashboard says the host is unreachable and keeps
// its session, dimmed; when it is back, a session made there meanwhile
// shows up.
func TestDashboardShowsHosts(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--name", "here", "-d", "--cmd", "cat")
	e.must("new", "--host", "h1", "--name", "faraway", "-d", "--cmd", "cat")

	tm := startTerm(t, append(e.vars, "TERM=xterm-256color"), 160, 40)
	// Text after mark: what the dashboard drew since.
	mark := tm.Mark
	since := func(at int) string { return ansi.Strip(tm.Since(at)) }
	text := func() string { return since(0) }

	poll.Wait(t, 30*time.Second, func() bool {
		s := text()
		return strings.Contains(s, "HOST") && strings.Contains(s, "faraway") && strings.Contains(s, "here")
	}, func() string { return "the dashboard never listed both sessions:\n" + text() })

	at := mark()
	srv.stop()
	poll.Wait(t, 30*time.Second, func() bool { return strings.Contains(since(at), "h1 unreachable") },
		func() string { return "the dashboard never said h1 is unreachable:\n" + since(at) })

	srv.start()
	// Made on the host while the dashboard was not looking at it.
	e.remote("new", "--name", "latecomer", "-d", "--cmd", "cat")
	poll.Wait(t, 30*time.Second, func() bool { return strings.Contains(since(at), "latecomer") },
		func() string { return "the dashboard never showed h1:latecomer:\n" + since(at) })
}

// TestDashboardCreatesOnAHost: in the dashboard's new-session dialog the
// host field picks h1; enter starts the session there (not here) and
// attaches to it as h1:NAME.
func TestDashboardCreatesOnAHost(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")

	tm := startTerm(t, append(e.vars, "TERM=xterm-256color"), 160, 40)
	mark := tm.Mark
	since := func(at int) string { return ansi.Strip(tm.Since(at)) }
	poll.Wait(t, 30*time.Second, func() bool { return strings.Contains(since(0), "c new") },
		func() string { return "the dashboard never drew:\n" + since(0) })
	at := mark()
	tm.Type(string("c"))
	poll.Wait(t, 20*time.Second, func() bool { return strings.Contains(since(at), "[this machine]  h1") },
		func() string { return "no host field in the dialog:\n" + since(at) })
	at = mark()
	tm.Type(string("\x1b[Z")) // shift+tab: to the host field
	tm.Type(string("\x1b[C")) // right: h1
	poll.Wait(t, 20*time.Second, func() bool { return strings.Contains(since(at), "this machine  [h1]") },
		func() string { return "h1 never chosen:\n" + since(at) })
	tm.Type(string("\t\t\tfromdash"))
	poll.Wait(t, 20*time.Second, func() bool { return strings.Contains(since(at), "fromdash") },
		func() string { return "the name never typed:\n" + since(at) })
	tm.Type(string("\r"))
	poll.Wait(t, 30*time.Second, func() bool {
		_, ok := find(e.ls("--host", "h1"), "h1", "fromdash")
		return ok
	}, func() string { return "h1:fromdash never listed:\n" + since(at) })
	if _, ok := find(e.ls(), "", "fromdash"); ok {
		t.Fatal("fromdash was started on this machine too")
	}
	// The dashboard attached to it on h1: a key typed reaches its shell.
	poll.Wait(t, 20*time.Second, func() bool { return strings.Contains(since(at), "\x1b[?1049h") || strings.Contains(since(at), "$") },
		func() string { return "no attach to h1:fromdash:\n" + since(at) })
	tm.Type(string("echo made-$((6*7))\r"))
	poll.Wait(t, 20*time.Second, func() bool { return strings.Contains(e.run("capture", "h1:fromdash").stdout, "made-42") },
		func() string { return "the attach never reached h1:fromdash:\n" + since(at) })
}

// sshLog makes the env's muster run ssh through a script that logs each
// invocation (one line of arguments) before running the real one, and
// returns what it logged so far, one entry per ssh process started. It
// must run before host add writes the hosts into config.toml.
func (e *env) sshLog() func() []string {
	e.t.Helper()
	log := filepath.Join(e.home, "ssh.log")
	wrapper := filepath.Join(e.home, "ssh-logged")
	script := fmt.Sprintf("#!/bin/sh\necho \"$*\" >> %s\nexec ssh \"$@\"\n", log)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		e.t.Fatal(err)
	}
	cfgPath := filepath.Join(e.home, "config", "config.toml")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := strings.Replace(string(b), "[ssh]\n", fmt.Sprintf("[ssh]\ncommand = %q\n", wrapper), 1)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return func() []string {
		b, _ := os.ReadFile(log)
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
}

// TestDashboardStreamsHosts: the dashboard follows a host through one
// watch stream over `muster relay`. A session started on the host and
// the notification it raises (OSC 9) reach the open dashboard, and while
// nothing happens no ssh process is started at all (a poller forks ssh
// for every host every few seconds). After the host's master connection
// is killed, the dashboard subscribes again by itself: a session started
// on the host afterwards shows up.
func TestDashboardStreamsHosts(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	sshRuns := e.sshLog()
	e.must("host", "add", "h1", "h1")
	e.must("new", "--name", "here", "-d", "--cmd", "cat")
	e.must("new", "--host", "h1", "--name", "early", "-d", "--cmd", "cat")

	tm := startTerm(t, append(e.vars, "TERM=xterm-256color"), 160, 40)
	since := func(at int) string { return ansi.Strip(tm.Since(at)) }
	poll.Wait(t, 30*time.Second, func() bool {
		s := since(0)
		return strings.Contains(s, "early") && strings.Contains(s, "here")
	}, func() string { return "the dashboard never listed both sessions:\n" + since(0) })

	before := len(sshRuns())
	at := tm.Mark()
	// Straight through ssh, not through this muster.
	// ssh hands the host's shell one string.
	e.remote("new", "--name", "pinger", "-d", "--cmd", host.ShellQuote(`printf '\033]9;deploy-ready\007'; exec cat`))
	poll.Wait(t, 30*time.Second, func() bool {
		s := since(at)
		return strings.Contains(s, "pinger") && strings.Contains(s, "deploy-ready")
	}, func() string { return "the dashboard never showed h1:pinger and its notification:\n" + since(at) })
	// Idle for longer than two of the old poller's rounds (2 s apart).
	time.Sleep(5 * time.Second)
	if runs := sshRuns(); len(runs) != before {
		t.Fatalf("the dashboard started %d ssh processes while following h1:\n%s", len(runs)-before, strings.Join(runs[before:], "\n"))
	}

	pid := e.master("h1")
	if pid == 0 {
		t.Fatal("no ControlMaster for h1")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	poll.Wait(t, 30*time.Second, func() bool { return e.master("h1") != 0 && len(sshRuns()) > before },
		func() string { return "the dashboard never connected to h1 again" })
	at = tm.Mark()
	e.remote("new", "--name", "afterkill", "-d", "--cmd", "cat")
	poll.Wait(t, 30*time.Second, func() bool { return strings.Contains(since(at), "afterkill") },
		func() string {
			return "the dashboard never showed h1:afterkill after the master was killed:\n" + since(at)
		})
	if !tm.Running() {
		t.Fatal("the dashboard exited")
	}
}
