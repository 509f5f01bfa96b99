package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/poll"
)

// TestMain checks that no test leaves a goroutine behind: every daemon a
// test starts must have stopped all of its own when Run returns.
func TestMain(m *testing.M) {
	if reply := os.Getenv(captureReplyEnv); reply != "" {
		// This binary was started in a pane, as an agent's hook would be.
		os.Exit(captureFromPane(reply))
	}
	goleak.VerifyTestMain(m)
}

// testDaemon is a daemon running in this process with its own home.
type testDaemon struct {
	t    *testing.T
	dirs paths.Dirs
	done chan error
}

func startDaemon(t *testing.T) *testDaemon {
	t.Helper()
	return startDaemonWith(t, nil)
}

// startDaemonWith starts a daemon with test hooks (nil for none).
func startDaemonWith(t *testing.T, hooks *testHooks) *testDaemon {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{"MUSTER_HOME": home, "HOME": home, "PATH": os.Getenv("PATH"), "SHELL": "/bin/sh"}
	getenv := func(k string) string { return env[k] }
	dirs, err := paths.Resolve(getenv)
	if err != nil {
		t.Fatal(err)
	}
	d := &testDaemon{t: t, dirs: dirs, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { d.done <- Run(ctx, Options{Dirs: dirs, Getenv: getenv, Version: "test", hooks: hooks}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-d.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("daemon did not stop")
		}
	})
	var dialErr, exitErr error
	exited := false
	poll.Wait(t, 20*time.Second, func() bool {
		c, err := net.Dial("unix", dirs.ControlSocket())
		if err == nil {
			c.Close()
			return true
		}
		dialErr = err
		select {
		case exitErr = <-d.done:
			d.done <- exitErr // for the cleanup
			exited = true
		default:
		}
		return exited
	}, func() string { return fmt.Sprintf("the control socket to answer: %v", dialErr) })
	if exited {
		t.Fatalf("daemon exited at start: %v", exitErr)
	}
	return d
}

// conn is one control connection speaking raw JSON lines.
type conn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

// dial connects and exchanges versions, as every client does.
func (d *testDaemon) dial() *conn {
	d.t.Helper()
	c := d.dialRaw()
	var res proto.HelloResult
	c.must(proto.OpHello, proto.Hello{Protocol: proto.ControlVersion, Version: "test-client"}, &res)
	if res.Protocol != proto.ControlVersion || res.Version != "test" || res.PID != os.Getpid() {
		d.t.Fatalf("hello = %+v", res)
	}
	return c
}

// dialRaw connects without the version exchange, like a client from
// before it.
func (d *testDaemon) dialRaw() *conn {
	d.t.Helper()
	c, err := net.Dial("unix", d.dirs.ControlSocket())
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { c.Close() })
	return &conn{t: d.t, c: c, br: bufio.NewReader(c)}
}

// raw sends one line and reads the response line.
func (c *conn) raw(line string) proto.Response {
	c.t.Helper()
	c.c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.c.Write([]byte(line + "\n")); err != nil {
		c.t.Fatal(err)
	}
	out, err := c.br.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("read response to %.80q: %v", line, err)
	}
	var resp proto.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		c.t.Fatalf("response %q: %v", out, err)
	}
	return resp
}

func (c *conn) call(op string, args any, result any) *proto.Error {
	c.t.Helper()
	req := map[string]any{"op": op}
	if args != nil {
		req["args"] = args
	}
	b, _ := json.Marshal(req)
	resp := c.raw(string(b))
	if !resp.OK {
		if resp.Error == nil {
			c.t.Fatalf("%s: a failure without an error", op)
		}
		if o, ok := proto.Lookup(op); ok && !o.MayReturn(resp.Error.Code) {
			c.t.Errorf("%s failed with code %s, which proto.Ops does not list for it", op, resp.Error.Code)
		}
		return resp.Error
	}
	if result != nil {
		if err := json.Unmarshal(resp.Result, result); err != nil {
			c.t.Fatalf("%s result %s: %v", op, resp.Result, err)
		}
	}
	return nil
}

func (c *conn) must(op string, args any, result any) {
	c.t.Helper()
	if e := c.call(op, args, result); e != nil {
		c.t.Fatalf("%s: %s: %s", op, e.Code, e.Message)
	}
}

func (c *conn) wantCode(code, op string, args any) {
	c.t.Helper()
	e := c.call(op, args, nil)
	if e == nil || e.Code != code {
		c.t.Fatalf("%s %v: error %+v, want code %s", op, args, e, code)
	}
}

func (c *conn) sessions() []proto.SessionInfo {
	c.t.Helper()
	var list []proto.SessionInfo
	c.must("ls", nil, &list)
	return list
}

func TestRequestHandling(t *testing.T) {
	d := startDaemon(t)
	c := d.dial()

	var st proto.DaemonStatus
	c.must("status", nil, &st)
	if st.PID != os.Getpid() || st.Version != "test" || st.Sessions != 0 {
		t.Errorf("status = %+v", st)
	}
	if got := c.sessions(); len(got) != 0 {
		t.Fatalf("ls on a new daemon = %+v", got)
	}

	dir := t.TempDir()
	var info proto.SessionInfo
	c.must("new", proto.NewArgs{Name: "cat", Dir: dir, Cmd: "cat", Cols: 80, Rows: 24}, &info)
	if info.Name != "cat" || info.State != "running" || info.PID <= 0 || info.CWD != dir {
		t.Errorf("new = %+v", info)
	}
	c.wantCode(proto.CodeConflict, "new", proto.NewArgs{Name: "cat", Dir: dir, Cmd: "cat"})
	c.wantCode(proto.CodeInvalid, "new", proto.NewArgs{Name: "bad name", Dir: dir, Cmd: "cat"})
	c.wantCode(proto.CodeInvalid, "new", proto.NewArgs{Name: "nodir", Dir: filepath.Join(dir, "missing"), Cmd: "cat"})
	if n := len(c.sessions()); n != 1 {
		t.Fatalf("refused requests created sessions: %d", n)
	}

	c.must("send", proto.SendArgs{Name: "cat", Text: "hello-daemon", Enter: true}, nil)
	var screen proto.CaptureResult
	poll.Wait(t, 20*time.Second, func() bool {
		c.must("capture", proto.CaptureArgs{Name: "cat"}, &screen)
		return strings.Contains(screen.Text, "hello-daemon\nhello-daemon")
	}, func() string { return "capture to show the echo:\n" + screen.Text })
	c.wantCode(proto.CodeBadRequest, "capture", proto.CaptureArgs{Name: "cat", Scrollback: -1})
	c.wantCode(proto.CodeNotFound, "send", proto.SendArgs{Name: "nosuch", Text: "x"})

	c.must("rename", proto.RenameArgs{Name: "cat", NewName: "kitten"}, nil)
	c.wantCode(proto.CodeNotFound, "capture", proto.CaptureArgs{Name: "cat"})
	c.wantCode(proto.CodeInvalid, "rename", proto.RenameArgs{Name: "kitten", NewName: "a/b"})
	c.must("new", proto.NewArgs{Name: "other", Dir: dir, Cmd: "cat"}, nil)
	c.wantCode(proto.CodeConflict, "rename", proto.RenameArgs{Name: "kitten", NewName: "other"})

	c.must("kill", proto.Target{Name: "kitten"}, nil)
	c.must("kill", proto.Target{Name: "other"}, nil)
	c.wantCode(proto.CodeNotFound, "kill", proto.Target{Name: "kitten"})
	if got := c.sessions(); len(got) != 0 {
		t.Errorf("sessions after kill: %+v", got)
	}
}

// TestMalformedRequests: each bad request gets one error line with a stable
// code and leaves the daemon serving.
func TestMalformedRequests(t *testing.T) {
	d := startDaemon(t)
	for _, tc := range []struct{ line, code string }{
		{`not json`, proto.CodeBadRequest},
		{`{"op":""}`, proto.CodeBadRequest},
		{`{"op":"no-such-op"}`, proto.CodeUnsupported},
		{`{"op":"new"}`, proto.CodeBadRequest},
		{`{"op":"send","args":[1,2]}`, proto.CodeBadRequest},
		{`{"op":"kill","args":{"name":""}}`, proto.CodeBadRequest},
		{`{"op":"rename","args":"x"}`, proto.CodeBadRequest},
		{`{"op":"capture","args":{"name":5}}`, proto.CodeBadRequest},
		{`{"op":"ls","args":` + strings.Repeat(" ", proto.MaxControlRequest) + `{}}`, proto.CodeBadRequest},
	} {
		c := d.dial()
		resp := c.raw(tc.line)
		if resp.OK || resp.Error == nil || resp.Error.Code != tc.code {
			t.Errorf("%.60q: response %+v, want code %s", tc.line, resp, tc.code)
		}
	}
	c := d.dial()
	if got := c.sessions(); len(got) != 0 {
		t.Errorf("malformed requests left sessions: %+v", got)
	}
}

// TestStopEndsRun: a stop request makes Run return nil once every pane is
// down, and the sockets are gone.
func TestStopEndsRun(t *testing.T) {
	d := startDaemon(t)
	c := d.dial()
	c.must("new", proto.NewArgs{Name: "sleeper", Dir: t.TempDir(), Cmd: "sleep 600"}, nil)
	c.must("stop", nil, nil)
	select {
	case err := <-d.done:
		if err != nil {
			t.Fatalf("Run after stop: %v", err)
		}
		d.done <- nil // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after stop")
	}
	if _, err := os.Stat(d.dirs.ControlSocket()); !os.IsNotExist(err) {
		t.Errorf("control.sock still there after stop: %v", err)
	}
}

// TestVersionExchange: a client from before hello, or of another protocol,
// gets the one line that says what to do; the frozen ops still work for it.
func TestVersionExchange(t *testing.T) {
	d := startDaemon(t)

	old := d.dialRaw() // control protocol 1: no hello
	e := old.call(proto.OpList, nil, nil)
	want := "the running daemon is version test (control protocol " + strconv.Itoa(proto.ControlVersion) + "), this client is older (control protocol 1); run `muster daemon restart` to replace it, keeping every pane"
	if e == nil || e.Code != proto.CodeVersion || e.Message != want {
		t.Fatalf("ls without hello = %+v\nwant %s", e, want)
	}
	var st proto.DaemonStatus
	old.must(proto.OpStatus, nil, &st)
	if st.Version != "test" || st.Protocol != proto.ControlVersion {
		t.Errorf("status without hello = %+v", st)
	}
	old.wantCode(proto.CodeUnsupported, "reboot", nil)

	other := d.dialRaw()
	e = other.call(proto.OpHello, proto.Hello{Protocol: 1, Version: "0.1.0"}, nil)
	want = "the running daemon is version test (control protocol " + strconv.Itoa(proto.ControlVersion) + "), this client is version 0.1.0 (control protocol 1); run `muster daemon restart` to replace it, keeping every pane"
	if e == nil || e.Code != proto.CodeVersion || e.Message != want {
		t.Fatalf("hello of protocol 1 = %+v\nwant %s", e, want)
	}
	other.wantCode(proto.CodeVersion, proto.OpCapture, proto.CaptureArgs{Name: "x"})
	other.wantCode(proto.CodeBadRequest, proto.OpHello, "x")

	// The real client.
	c, err := client.Dial(t.Context(), d.dirs, "test-client")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var list []proto.SessionInfo
	if err := c.Call(t.Context(), proto.OpList, nil, &list); err != nil || len(list) != 0 {
		t.Errorf("ls = %v, %v", list, err)
	}
}

// TestOldClientCanStop: `muster daemon stop` of any version stops this
// daemon: stop needs no hello.
func TestOldClientCanStop(t *testing.T) {
	d := startDaemon(t)
	d.dialRaw().must(proto.OpStop, nil, nil)
	select {
	case err := <-d.done:
		if err != nil {
			t.Fatalf("Run after stop: %v", err)
		}
		d.done <- nil // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after stop")
	}
}

// TestListKeepsCreationOrder: ls lists sessions in the order they were
// created, also within one second (its time has seconds; the order used to
// fall back to the names there).
func TestListKeepsCreationOrder(t *testing.T) {
	d := startDaemon(t)
	c := d.dial()
	names := []string{"zz", "mm", "aa"}
	for _, n := range names {
		c.must(proto.OpNew, proto.NewArgs{Name: n, Dir: t.TempDir(), Cmd: "sleep 600"}, nil)
	}
	var list []proto.SessionInfo
	c.must(proto.OpList, nil, &list)
	var got []string
	for _, s := range list {
		got = append(got, s.Name)
	}
	if !slices.Equal(got, names) {
		t.Errorf("ls order %v, want the creation order %v", got, names)
	}
}
