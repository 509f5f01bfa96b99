package hosts_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/poll"
)

// hookLoop is a pane command on the host playing an agent that runs its
// hooks: it feeds each payload file dropped into the spool directory to
// the host's `muster hook event claude`, in order, and removes it once
// the hook returned. The test writes the files straight into the host's
// filesystem (it is this machine), so events happen there even while no
// ssh connection is up.
func (e *env) hookLoop(spool string) string {
	return fmt.Sprintf(`mkdir -p %[1]s; while :; do for f in %[1]s/*.json; do [ -e "$f" ] || continue; %[2]s hook event claude < "$f"; rm -f "$f"; done; sleep 0.05; done`,
		spool, e.srv.home+"/.local/share/muster/bin/"+version(e)+"/muster")
}

// spool is where the host's session name reads its hook payloads.
func (e *env) spool(name string) string { return e.srv.home + "/spool-" + name }

// hook has the host's session name run one Claude Code hook and returns
// once the host's muster took it. The Claude session id is the test's
// own: the hook helper remembers turns by it.
func (e *env) hook(name, event, extra string) {
	e.t.Helper()
	payload := fmt.Sprintf(`{"session_id":"%s","transcript_path":"/tmp/x.jsonl","cwd":"/tmp","prompt_id":"p-1","hook_event_name":"%s"%s}`, e.srv.user+"-"+name, event, extra)
	dir := e.spool(name)
	os.MkdirAll(dir, 0o755)
	os.Chown(dir, e.srv.uid, -1)
	tmp := filepath.Join(dir, "next.tmp")
	final := filepath.Join(dir, fmt.Sprintf("%020d.json", time.Now().UnixNano()))
	if err := os.WriteFile(tmp, []byte(payload), 0o644); err != nil {
		e.t.Fatal(err)
	}
	os.Chown(tmp, e.srv.uid, -1)
	if err := os.Rename(tmp, final); err != nil {
		e.t.Fatal(err)
	}
	poll.Wait(e.t, 20*time.Second, func() bool { _, err := os.Stat(final); return os.IsNotExist(err) },
		func() string { return "the host's hook loop never ran " + event })
}

// background runs muster with args and returns its exit status, stdout and
// stderr once it ends, on the channel.
func (e *env) background(args ...string) (*exec.Cmd, <-chan result) {
	cmd := exec.Command(musterBin, args...)
	cmd.Env = e.vars
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		done <- result{out.String(), errb.String(), code}
	}()
	e.t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, done
}

// remoteWaits counts the host user's `muster wait` processes: the local
// wait is in once the host's runs.
func (e *env) remoteWaits() int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		if _, err := strconv.Atoi(ent.Name()); err != nil {
			continue
		}
		st, err := os.Stat(filepath.Join("/proc", ent.Name()))
		if err != nil || int(st.Sys().(*syscall.Stat_t).Uid) != e.srv.uid {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		argv := strings.Split(string(b), "\x00")
		if len(argv) > 1 && strings.HasSuffix(argv[0], "/muster") && argv[1] == "wait" {
			n++
		}
	}
	return n
}

func waitResult(t *testing.T, done <-chan result, within time.Duration) result {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(within):
		t.Fatalf("wait did not return within %v", within)
	}
	return result{}
}

// TestWaitOnAHostOutlivesTheLink: `muster wait h1:x --until
// waitingApproval` is waiting when h1's sshd goes away; while it is down
// the agent asks for approval and goes back to running; once sshd is back
// the wait returns, reached, though the state it waited for is over: the
// host's events since the wait began are read after the reconnect.
func TestWaitOnAHostOutlivesTheLink(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--host", "h1", "--name", "x", "-d", "--cmd", e.hookLoop(e.spool("x")))
	e.hook("x", "UserPromptSubmit", `,"prompt":"run the tests"`)
	if r := e.run("wait", "h1:x", "--until", "running", "--timeout", "20s"); r.code != 0 || !strings.Contains(r.stdout, "h1:x: running") {
		t.Fatalf("wait h1:x --until running: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	_, done := e.background("wait", "h1:x", "--until", "waitingApproval", "--timeout", "90s")
	poll.Wait(t, 20*time.Second, func() bool { return e.remoteWaits() > 0 }, func() string { return "the host's wait never started" })
	srv.stop()
	e.hook("x", "PermissionRequest", `,"tool_name":"Bash","tool_input":{"command":"make test"}`)
	e.hook("x", "PostToolUse", `,"tool_name":"Bash","tool_input":{"command":"make test"},"tool_response":{"stdout":"ok"}`)
	select {
	case r := <-done:
		t.Fatalf("wait returned while the host was down: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	case <-time.After(time.Second):
	}
	srv.start()
	r := waitResult(t, done, 40*time.Second)
	if r.code != 0 || !strings.Contains(r.stdout, "h1:x: waitingApproval") {
		t.Fatalf("wait after the reconnect: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "host h1:") || !strings.Contains(r.stderr, "reconnecting") {
		t.Fatalf("wait never said the link went down: %s", r.stderr)
	}
}

// TestWaitAnySpansHosts: `muster wait --any` with no name waits on this
// machine's sessions and every host's, and returns with the host's
// session that reached the state.
func TestWaitAnySpansHosts(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--name", "here", "-d", "--cmd", "cat")
	e.must("new", "--host", "h1", "--name", "x", "-d", "--cmd", e.hookLoop(e.spool("x")))
	// Nothing is waiting yet anywhere: a short wait times out.
	if r := e.run("wait", "--any", "--until", "waitingApproval", "--timeout", "1s"); r.code != 1 {
		t.Fatalf("wait --any before any event: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	_, done := e.background("wait", "--any", "--until", "waitingApproval", "--timeout", "60s")
	poll.Wait(t, 20*time.Second, func() bool { return e.remoteWaits() > 0 }, func() string { return "the host's wait never started" })
	e.hook("x", "PermissionRequest", `,"tool_name":"Bash","tool_input":{"command":"make test"}`)
	r := waitResult(t, done, 30*time.Second)
	if r.code != 0 || !strings.Contains(r.stdout, "h1:x: waitingApproval") || strings.Contains(r.stdout, "here") {
		t.Fatalf("wait --any: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// Named sessions on two machines, each waited where it lives.
	if r := e.run("wait", "--any", "here", "h1:x", "--until", "waitingApproval", "--timeout", "20s"); r.code != 0 || !strings.Contains(r.stdout, "h1:x: waitingApproval") {
		t.Fatalf("wait --any here h1:x: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("wait", "h1:nope", "--until", "running", "--timeout", "5s"); r.code != 3 || !strings.Contains(r.stderr, "nope") {
		t.Fatalf("wait h1:nope: exit %d, want 3\n%s%s", r.code, r.stdout, r.stderr)
	}
}
