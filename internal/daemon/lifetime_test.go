package daemon

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // to hold the store's writer from outside

	"github.com/google/uuid"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/poll"
)

// The daemon's lifetime: a dying listener stops it with its error, and
// requests end with their clients.

// listeners captures a daemon and its sockets' listeners as it starts.
type listeners struct {
	mu              sync.Mutex
	d               *Daemon
	control, events *net.UnixListener
}

func (l *listeners) hook(d *Daemon, control, events *net.UnixListener) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.d, l.control, l.events = d, control, events
}

func (l *listeners) get() (*Daemon, *net.UnixListener, *net.UnixListener) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.d, l.control, l.events
}

// runError waits for Run to return and gives its error back, leaving nil
// for the harness's cleanup.
func (d *testDaemon) runError() error {
	d.t.Helper()
	select {
	case err := <-d.done:
		d.done <- nil
		return err
	case <-time.After(30 * time.Second):
		d.t.Fatal("Run did not return")
		return nil
	}
}

// TestDyingListenerStopsTheDaemon: when a socket's listener dies under a
// running daemon, Run closes every pane and returns that listener's error
// (and `muster daemon --foreground` exits non-zero with it) instead of
// running on with hooks or commands failing silently.
func TestDyingListenerStopsTheDaemon(t *testing.T) {
	for _, which := range []string{"events.sock", "control.sock"} {
		t.Run(which, func(t *testing.T) {
			var l listeners
			d := startDaemonWith(t, &testHooks{listening: l.hook})
			c := d.dial()
			var info proto.SessionInfo
			c.must(proto.OpNew, proto.NewArgs{Name: "p", Dir: t.TempDir(), Cmd: "sleep 600"}, &info)
			_, control, events := l.get()
			if which == "events.sock" {
				events.Close()
			} else {
				control.Close()
			}
			err := d.runError()
			if !errors.Is(err, net.ErrClosed) || !strings.Contains(err.Error(), which) {
				t.Fatalf("Run = %v, want the error of %s's listener", err, which)
			}
			// The pane went with the daemon.
			if p, err := os.FindProcess(info.PID); err == nil && p.Signal(nil) == nil {
				poll.Wait(t, 20*time.Second, func() bool { return p.Signal(nil) != nil },
					func() string { return "the pane's process to end" })
			}
		})
	}
}

// TestSendEndsWithItsClient: a send whose client hangs up while it waits
// for an agent's echo ends at once, and types no Enter.
func TestSendEndsWithItsClient(t *testing.T) {
	var l listeners
	// Without the hang-up, this send would wait an hour for the echo.
	d := startDaemonWith(t, &testHooks{listening: l.hook, echoTimeout: time.Hour})
	dmn, _, _ := l.get()
	dir := t.TempDir()
	typed := filepath.Join(dir, "typed")
	c := d.dial()
	// An agent's session (so send waits for the echo) whose program shows
	// nothing and keeps every byte it is sent.
	c.must(proto.OpNew, proto.NewArgs{Name: "agent", Provider: "claude", Dir: dir,
		Cmd: "sh " + script(t, "stty raw -echo; exec cat > "+typed)}, nil)
	poll.Wait(t, 20*time.Second, func() bool {
		_, err := os.Stat(typed)
		return err == nil
	}, func() string { return "the agent to start" })
	c.c.Close()

	s := d.dial()
	s.c.SetDeadline(time.Now().Add(20 * time.Second))
	line := `{"op":"send","args":{"name":"agent","text":"hello","enter":true}}` + "\n"
	if _, err := s.c.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	poll.Wait(t, 20*time.Second, func() bool {
		b, _ := os.ReadFile(typed)
		return string(b) == "hello"
	}, func() string { return "the text to reach the pane" })
	s.c.Close() // the client gives up while send waits for the echo
	poll.Wait(t, 20*time.Second, func() bool { return dmn.ctl.count() == 0 },
		func() string { return "the send to end with its client" })
	if b, _ := os.ReadFile(typed); string(b) != "hello" {
		t.Errorf("the pane was sent %q; want the text without an Enter", b)
	}
}

// TestRenameDoesNotStallPaneOutput: a rename waiting on a slow store holds
// no lock that the pane output path takes, so output keeps flowing to an
// attached client while the rename waits.
func TestRenameDoesNotStallPaneOutput(t *testing.T) {
	reached := make(chan struct{}, 1)
	d := startDaemonWith(t, &testHooks{renameWrite: func() { reached <- struct{}{} }})
	c := d.dial()
	// Each line typed prints an agent status (OSC 7501: the output path
	// looks it up under the daemon's lock) and a marker.
	c.must(proto.OpNew, proto.NewArgs{Name: "p", Dir: t.TempDir(),
		Cmd: "sh " + script(t, `while read l; do printf '\033]7501;state=working\007out-%s\n' "$l"; done`)}, nil)

	// An attached client, reading frames.
	a := d.dial()
	a.must(proto.OpAttach, proto.AttachArgs{Name: "p", Cols: 80, Rows: 24}, nil)
	var mu sync.Mutex
	var seen bytes.Buffer
	go func() {
		buf := make([]byte, 0, 64<<10)
		for {
			typ, p, err := proto.ReadFrame(a.br, buf)
			if err != nil {
				return
			}
			if typ == proto.FrameOutput || typ == proto.FrameSnapshot {
				mu.Lock()
				seen.Write(p)
				mu.Unlock()
			}
		}
	}()
	saw := func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Contains(seen.Bytes(), []byte(s))
	}
	input := func(s string) {
		if err := proto.WriteFrame(a.c, proto.FrameInput, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	input("before\r")
	poll.Wait(t, 20*time.Second, func() bool { return saw("out-before") }, func() string { return "output before the rename" })

	// Hold the store's writer: the rename's write waits for it.
	db, err := sql.Open("sqlite", "file:"+d.dirs.Database()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hold, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	if _, err := hold.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	renamed := make(chan *proto.Error, 1)
	r := d.dial()
	go func() {
		req := `{"op":"rename","args":{"name":"p","new_name":"q"}}`
		resp := r.raw(req)
		renamed <- resp.Error
	}()
	<-reached // the rename is at its store write
	input("during\r")
	poll.Wait(t, 20*time.Second, func() bool { return saw("out-during") }, func() string { return "output during the rename" })
	select {
	case e := <-renamed:
		t.Fatalf("the rename ended (%v) before the store let it write: the output waited for it", e)
	default:
	}
	if _, err := hold.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if e := <-renamed; e != nil {
		t.Fatalf("rename: %s %s", e.Code, e.Message)
	}
	list := c.sessions()
	if len(list) != 1 || list[0].Name != "q" {
		t.Errorf("sessions after the rename = %+v", list)
	}
}

// TestRenameRaces: a name a rename is giving cannot be taken meanwhile,
// and one session is renamed once at a time.
func TestRenameRaces(t *testing.T) {
	release := make(chan struct{})
	reached := make(chan struct{}, 1)
	d := startDaemonWith(t, &testHooks{renameWrite: func() {
		reached <- struct{}{}
		<-release
	}})
	c := d.dial()
	dir := t.TempDir()
	c.must(proto.OpNew, proto.NewArgs{Name: "a", Dir: dir, Cmd: "sleep 600"}, nil)
	r := d.dial()
	done := make(chan *proto.Error, 1)
	go func() { done <- r.call(proto.OpRename, proto.RenameArgs{Name: "a", NewName: "b"}, nil) }()
	<-reached
	c.wantCode(proto.CodeConflict, proto.OpNew, proto.NewArgs{Name: "b", Dir: dir, Cmd: "sleep 600"})
	c.wantCode(proto.CodeConflict, proto.OpRename, proto.RenameArgs{Name: "a", NewName: "c"})
	close(release)
	if e := <-done; e != nil {
		t.Fatalf("rename: %+v", e)
	}
	if list := c.sessions(); len(list) != 1 || list[0].Name != "b" {
		t.Errorf("sessions = %+v", list)
	}
	// The name is free again for a rename after it.
	c.must(proto.OpRename, proto.RenameArgs{Name: "b", NewName: "a"}, nil)
}

// script writes a shell script for a pane to run.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pane.sh")
	if err := os.WriteFile(path, []byte(body+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestResumeEndsWithItsClient: a resume whose client hangs up while it
// watches a relaunched pane ends at once; the pane runs on.
func TestResumeEndsWithItsClient(t *testing.T) {
	var l listeners
	// Without the hang-up, this resume would watch the pane for an hour.
	d := startDaemonWith(t, &testHooks{listening: l.hook, resumeSettle: time.Hour})
	dmn, _, _ := l.get()
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	c := d.dial()
	// The first run exits at once; the resumed one stays.
	c.must(proto.OpNew, proto.NewArgs{Name: "s", Dir: dir,
		Cmd: "sh " + script(t, "[ -e "+marker+" ] && exec sleep 600; touch "+marker)}, nil)
	poll.Wait(t, 20*time.Second, func() bool { return c.sessions()[0].State == "exited" },
		func() string { return "the first run to exit" })
	c.c.Close()

	r := d.dial()
	r.c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := r.c.Write([]byte(`{"op":"resume","args":{"names":["s"]}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	w := d.dial()
	poll.Wait(t, 20*time.Second, func() bool { return w.sessions()[0].State == "running" },
		func() string { return "the resumed pane to run" })
	w.c.Close()
	r.c.Close() // the client gives up while resume watches the pane
	poll.Wait(t, 20*time.Second, func() bool { return dmn.ctl.count() == 0 },
		func() string { return "the resume to end with its client" })
	if s := d.dial().sessions()[0]; s.State != "running" {
		t.Errorf("after the resume's client left, the session is %+v; want it running", s)
	}
}

// captureReplyEnv names the file where a test binary started in a pane
// writes how the daemon answered its native capture.
const captureReplyEnv = "DAEMON_TEST_CAPTURE_REPLY"

// captureFromPane records a native id for the pane it runs in, as `muster
// hook capture` does, writes the daemon's answer to reply and then stays,
// as an agent would.
func captureFromPane(reply string) int {
	dirs, err := paths.Resolve(os.Getenv)
	if err != nil {
		return 1
	}
	ctx := context.Background()
	answer := "ok"
	c, err := client.Dial(ctx, dirs, "test")
	if err == nil {
		err = c.Call(ctx, proto.OpNativeCapture, proto.NativeCaptureArgs{
			SessionID: os.Getenv("MUSTER_AGENT_SESSION_ID"), Capability: os.Getenv("MUSTER_EVENT_CAPABILITY"),
			Provider: "claude", NativeID: os.Getenv("DAEMON_TEST_NATIVE_ID"),
			PID: os.Getpid(), PPID: os.Getppid(), Event: "SessionStart", Source: "startup",
		}, nil)
	}
	if err != nil {
		answer = err.Error()
	}
	if os.WriteFile(reply+".tmp", []byte(answer), 0o600) != nil || os.Rename(reply+".tmp", reply) != nil {
		return 1
	}
	time.Sleep(10 * time.Minute)
	return 0
}

// TestCaptureWhileTheSurfaceIsRecorded: an agent's first hook may come
// while its launch still writes the store; the capture is accepted, because
// the session names its pane before that write.
func TestCaptureWhileTheSurfaceIsRecorded(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reply := filepath.Join(t.TempDir(), "reply")
	// The launch's store write waits until the pane's capture was answered.
	d := startDaemonWith(t, &testHooks{recordingSurface: func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(reply); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}})
	c := d.dial()
	native := uuid.NewString()
	c.must(proto.OpNew, proto.NewArgs{Name: "agent", Provider: "claude", Dir: t.TempDir(),
		Cmd: "sh " + script(t, "exec "+exe),
		Env: map[string]string{captureReplyEnv: reply, "DAEMON_TEST_NATIVE_ID": native, "PATH": os.Getenv("PATH")}}, nil)
	b, err := os.ReadFile(reply)
	if err != nil {
		t.Fatalf("the pane's capture was never answered: %v", err)
	}
	if string(b) != "ok" {
		t.Fatalf("the capture sent during the launch's store write was refused: %s", b)
	}
	if s := c.sessions()[0]; s.NativeSessionID != native || s.State != "running" {
		t.Errorf("after the capture, the session is %+v; want native id %s, running", s, native)
	}
}

// TestExitWhileTheSurfaceIsRecorded: a program that exits while its launch
// still writes the store is seen to have exited, with its code, and is not
// left running.
func TestExitWhileTheSurfaceIsRecorded(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "exiting")
	d := startDaemonWith(t, &testHooks{recordingSurface: func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(marker); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // for the exit to be reaped
	}})
	c := d.dial()
	c.must(proto.OpNew, proto.NewArgs{Name: "s", Dir: dir, Cmd: "sh " + script(t, "touch "+marker+"; exit 3")}, nil)
	poll.Wait(t, 20*time.Second, func() bool {
		s := c.sessions()[0]
		return s.State == "exited" && s.ExitCode != nil && *s.ExitCode == 3
	}, func() string { return fmt.Sprintf("the session to have exited with code 3, not %+v", c.sessions()[0]) })
	// The store, which a restarted daemon reads, says so too.
	db, err := sql.Open("sqlite", "file:"+d.dirs.Database()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	poll.Wait(t, 20*time.Second, func() bool {
		var state string
		var code sql.NullInt64
		err := db.QueryRow(`SELECT state, exit_code FROM surfaces`).Scan(&state, &code)
		return err == nil && state == "exited" && code.Valid && code.Int64 == 3
	}, func() string {
		var state string
		var code sql.NullInt64
		err := db.QueryRow(`SELECT state, exit_code FROM surfaces`).Scan(&state, &code)
		return fmt.Sprintf("the stored surface to have exited with code 3, not %s %v (%v)", state, code, err)
	})
}

// TestNotificationAtOnceIsKept: a program that asks for attention in its
// very first output (OSC 9 before anything else) gets its item, although
// its output is read before the launch has registered the surface with
// the estimator. The launch is held in that window until the program has
// printed the notification.
func TestNotificationAtOnceIsKept(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "printed")
	d := startDaemonWith(t, &testHooks{paneStarted: func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(marker); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // for the pane to read it
	}})
	c := d.dial()
	c.must(proto.OpNew, proto.NewArgs{Name: "asks", Dir: t.TempDir(),
		Cmd: "sh " + script(t, `printf '\033]9;approve the deploy\007'; touch `+marker+`; exec cat`)}, nil)
	poll.Wait(t, 20*time.Second, func() bool {
		var items []proto.AttentionItem
		c.must(proto.OpAttention, proto.AttentionArgs{}, &items)
		return len(items) == 1 && items[0].Message == "approve the deploy"
	}, func() string { return "the notification printed at once to open an item" })
}
