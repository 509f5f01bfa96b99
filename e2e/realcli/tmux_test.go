package realcli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/e2e/realcli"
)

// tmuxServer is a private tmux server whose panes run a CLI with a Setup's
// environment. Tests here use it to prove the harness without Muster.
type tmuxServer struct {
	t    *testing.T
	s    *realcli.Setup
	bin  string
	sock string
	n    int
}

func newTmux(t *testing.T, s *realcli.Setup) *tmuxServer {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux not found on PATH: the real-CLI tests drive the CLIs in tmux (.ci/run installs it)")
	}
	conf := filepath.Join(s.Root, "tmux.conf")
	// Keep a pane after its process exits, so its last screen and exit
	// status stay readable.
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 5000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := &tmuxServer{t: t, s: s, bin: bin, sock: filepath.Join(s.Root, "tmux.sock")}
	t.Cleanup(ts.stop)
	return ts
}

func (ts *tmuxServer) run(args ...string) (string, error) {
	cmd := exec.Command(ts.bin, append([]string{"-S", ts.sock, "-f", filepath.Join(ts.s.Root, "tmux.conf")}, args...)...)
	cmd.Env = ts.s.Env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), &tmuxError{args: args, err: err, stderr: strings.TrimSpace(errb.String())}
	}
	return out.String(), nil
}

type tmuxError struct {
	args   []string
	err    error
	stderr string
}

func (e *tmuxError) Error() string {
	return "tmux " + strings.Join(e.args, " ") + ": " + e.err.Error() + ": " + e.stderr
}

func (ts *tmuxServer) must(args ...string) string {
	ts.t.Helper()
	out, err := ts.run(args...)
	if err != nil {
		ts.t.Fatal(err)
	}
	return out
}

// stop kills the server and every process in its panes' sessions, which a
// process that ignores the hangup would otherwise outlive.
func (ts *tmuxServer) stop() {
	out, _ := ts.run("list-panes", "-a", "-F", "#{pane_pid}")
	sids := map[int]bool{}
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil {
			sids[pid] = true
		}
	}
	ts.run("kill-server")
	killSessions(sids)
}

// sessionMembers returns the processes whose session id is in sids.
func sessionMembers(sids map[int]bool) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid pgrp session.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 4 || f[0] == "Z" {
			continue
		}
		sid, _ := strconv.Atoi(f[3])
		if sids[sid] {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
			pids = append(pids, pid)
		}
	}
	return pids
}

func killSessions(sids map[int]bool) {
	if len(sids) == 0 {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := sessionMembers(sids)
		if len(pids) == 0 || time.Now().After(deadline) {
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pane is one tmux session running a CLI.
type pane struct {
	ts   *tmuxServer
	name string
	pid  int
}

// start runs argv in a new 120×40 pane in the Setup's working directory.
func (ts *tmuxServer) start(argv ...string) *pane {
	ts.t.Helper()
	ts.n++
	name := "p" + strconv.Itoa(ts.n)
	args := append([]string{"new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", ts.s.Dir, "--"}, argv...)
	ts.must(args...)
	p := &pane{ts: ts, name: name}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.must("display-message", "-p", "-t", name, "#{pane_pid}")))
	if err != nil {
		ts.t.Fatal(err)
	}
	p.pid = pid
	return p
}

// screen returns the pane's text, with up to 300 lines of history,
// after answering a start-up dialog the pane shows (see visible).
func (p *pane) screen() string {
	p.visible()
	out, err := p.ts.run("capture-pane", "-p", "-J", "-S", "-300", "-t", p.name)
	if err != nil {
		return "(capture failed: " + err.Error() + ")"
	}
	return out
}

// visible returns only what the pane shows now. When that is a start-up
// dialog, realcli.Setup.AnswerDialog answers it first (one key per call)
// and visible returns the screen after the key: every wait of these tests
// reads the screen, so a dialog never holds one up.
func (p *pane) visible() string {
	out, err := p.Screen()
	if err != nil {
		return "(capture failed: " + err.Error() + ")"
	}
	if p.ts.s.AnswerDialog(p.ts.t, out, p) {
		if out, err = p.Screen(); err != nil {
			return "(capture failed: " + err.Error() + ")"
		}
	}
	return out
}

// Screen implements realcli.Terminal: what the pane shows now, as is.
func (p *pane) Screen() (string, error) {
	return p.ts.run("capture-pane", "-p", "-t", p.name)
}

// Press implements realcli.Terminal.
func (p *pane) Press(k realcli.Key) error {
	_, err := p.ts.run("send-keys", "-t", p.name, k.Name)
	return err
}

func (p *pane) keys(keys ...string) {
	p.ts.t.Helper()
	p.ts.must(append([]string{"send-keys", "-t", p.name}, keys...)...)
}

func (p *pane) text(s string) {
	p.ts.t.Helper()
	p.ts.must("send-keys", "-t", p.name, "-l", s)
}

// hangUp closes the pane's terminal, as a pane manager stopping does, and
// returns the processes of the pane's session that outlived the hangup
// by 10 s (they are killed).
func (p *pane) hangUp() []string {
	p.ts.t.Helper()
	p.ts.must("kill-session", "-t", p.name)
	sids := map[int]bool{p.pid: true}
	poll(10*time.Second, func() bool { return len(sessionMembers(sids)) == 0 })
	var left []string
	for _, pid := range sessionMembers(sids) {
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		left = append(left, strconv.Itoa(pid)+" "+strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))))
	}
	killSessions(sids)
	return left
}

// waitFor polls until cond holds, failing the test with the screen after
// timeout. It returns how long the wait took.
func (p *pane) waitFor(what string, timeout time.Duration, cond func() bool) time.Duration {
	p.ts.t.Helper()
	start := time.Now()
	if !poll(timeout, cond) {
		p.ts.t.Fatalf("%s: gave up after %s waiting for %s; screen:\n%s", p.ts.s.CLI, timeout, what, p.visible())
	}
	return time.Since(start)
}

func (p *pane) waitScreen(want string, timeout time.Duration) time.Duration {
	p.ts.t.Helper()
	return p.waitFor("screen to show "+strconvQuote(want), timeout, func() bool { return strings.Contains(p.screen(), want) })
}

func strconvQuote(s string) string { return strconv.Quote(s) }
