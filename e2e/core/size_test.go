package core_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/musterhq/muster/internal/proto"
)

var sizeProbe atomic.Int64

// paneSize asks the shell in a pane for its terminal size ("ROWS COLS").
func (e *env) paneSize(name string) string {
	e.t.Helper()
	marker := fmt.Sprintf("size-%d:", sizeProbe.Add(1))
	e.must("send", name, "clear; echo "+marker+"$(stty size)", "--enter")
	// The typed command shows the marker too; wait for the answer.
	re := regexp.MustCompile(regexp.QuoteMeta(marker) + `(\d+ \d+)`)
	var screen string
	var m []string
	if !eventually(func() bool {
		screen = e.run("capture", name).stdout
		m = re.FindStringSubmatch(screen)
		return m != nil
	}) {
		e.t.Fatalf("no size after %s on the screen of %s:\n%s", marker, name, screen)
	}
	return m[1]
}

// control opens a raw connection to control.sock, past the version
// exchange.
func (e *env) control(t *testing.T) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("unix", filepath.Join(e.home, "run", "control.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	if code, msg := request(t, conn, br, helloLine); code != "" {
		t.Fatalf("hello: %s %s", code, msg)
	}
	return conn, br
}

// request sends one raw request line and returns the error code of the
// response ("" when it succeeded).
func request(t *testing.T, conn net.Conn, br *bufio.Reader, req string) (code, message string) {
	t.Helper()
	if _, err := io.WriteString(conn, req+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("request %s: no response: %v", req, err)
	}
	var resp proto.Response
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		t.Fatalf("request %s: response %q: %v", req, line, err)
	}
	if resp.OK {
		return "", ""
	}
	return resp.Error.Code, resp.Error.Message
}

func TestOutOfRangeSizesAreRefused(t *testing.T) {
	e := newEnv(t)
	work := t.TempDir()
	e.must("new", "--name", "victim", "--detach", "--cmd", "bash --norc --noprofile")
	if got := e.paneSize("victim"); got != "24 80" {
		t.Fatalf("victim starts at %s, want the default 24 80", got)
	}
	bad := [][2]int{{5000, 5000}, {100000, 100000}, {1001, 24}, {80, 1001}, {-1, -1}, {-80, 24}, {0, 24}, {80, 0}, {1 << 40, 1 << 40}}

	t.Run("new", func(t *testing.T) {
		conn, br := e.control(t)
		for _, s := range bad {
			req := fmt.Sprintf(`{"op":"new","args":{"name":"big","dir":%q,"cmd":"sleep 100","cols":%d,"rows":%d}}`, work, s[0], s[1])
			code, msg := request(t, conn, br, req)
			want := fmt.Sprintf("terminal size %dx%d is out of range: columns and rows must be 1–1000", s[0], s[1])
			if code != proto.CodeInvalid || msg != want {
				t.Errorf("new %dx%d: code %q message %q, want %q %q", s[0], s[1], code, msg, proto.CodeInvalid, want)
			}
		}
		for _, s := range e.ls() {
			if s.Name != "victim" {
				t.Errorf("a refused new left session %q behind", s.Name)
			}
		}
	})

	t.Run("attach", func(t *testing.T) {
		for _, s := range bad {
			// A refused attach ends its connection, as any failed attach.
			conn, br := e.control(t)
			req := fmt.Sprintf(`{"op":"attach","args":{"name":"victim","cols":%d,"rows":%d}}`, s[0], s[1])
			if code, _ := request(t, conn, br, req); code != proto.CodeInvalid {
				t.Errorf("attach %dx%d: code %q, want %q", s[0], s[1], code, proto.CodeInvalid)
			}
		}
		if got := e.paneSize("victim"); got != "24 80" {
			t.Errorf("after refused attaches the pane is %s, want 24 80", got)
		}
	})

	t.Run("resize frames", func(t *testing.T) {
		conn, br := e.control(t)
		if code, msg := request(t, conn, br, `{"op":"attach","args":{"name":"victim","cols":90,"rows":25}}`); code != "" {
			t.Fatalf("attach: %s %s", code, msg)
		}
		go io.Copy(io.Discard, br)
		if got := e.paneSize("victim"); got != "25 90" {
			t.Fatalf("attached at 90x25, the pane is %s", got)
		}
		// uint16 frames cannot carry a negative size; these are the rest.
		for _, s := range [][2]int{{65535, 65535}, {5000, 25}, {90, 1001}, {0, 0}, {0, 25}, {90, 0}} {
			if err := proto.WriteFrame(conn, proto.FrameResize, proto.ResizePayload(s[0], s[1])); err != nil {
				t.Fatal(err)
			}
		}
		// Frames are handled in order: once this one applies, every
		// frame above was seen, and ignored.
		proto.WriteFrame(conn, proto.FrameResize, proto.ResizePayload(100, 30))
		if !eventually(func() bool { return e.paneSize("victim") == "30 100" }) {
			t.Fatalf("a valid resize after the ignored ones never applied: %s", e.paneSize("victim"))
		}
		proto.WriteFrame(conn, proto.FrameDetach, nil)
	})

	t.Run("resume", func(t *testing.T) {
		conn, br := e.control(t)
		for _, s := range bad {
			req := fmt.Sprintf(`{"op":"resume","args":{"all":true,"cols":%d,"rows":%d}}`, s[0], s[1])
			if code, _ := request(t, conn, br, req); code != proto.CodeInvalid {
				t.Errorf("resume %dx%d: code %q, want %q", s[0], s[1], code, proto.CodeInvalid)
			}
		}
	})

	// The daemon is alive and the other pane still works.
	e.must("daemon", "status")
	e.must("send", "victim", "echo still-alive", "--enter")
	e.waitScreen("victim", "still-alive")
}

func TestRefusedResumeChangesNothing(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "back", "--detach", "--cmd", "sleep 1000")
	e.must("daemon", "stop", "--force")
	before := e.session("back")
	if before.State != "restorable" {
		t.Fatalf("after daemon stop: state %q, want restorable", before.State)
	}
	conn, br := e.control(t)
	for _, req := range []string{
		`{"op":"resume","args":{"names":["back"],"cols":5000,"rows":5000}}`,
		`{"op":"resume","args":{"all":true,"cols":-1,"rows":-1}}`,
	} {
		if code, _ := request(t, conn, br, req); code != proto.CodeInvalid {
			t.Errorf("%s: code %q, want %q", req, code, proto.CodeInvalid)
		}
	}
	if s := e.session("back"); s.State != "restorable" || s.SurfaceID != before.SurfaceID {
		t.Errorf("after refused resumes: state %q surface %s, want restorable on surface %s", s.State, s.SurfaceID, before.SurfaceID)
	}
	if code, msg := request(t, conn, br, `{"op":"resume","args":{"names":["back"],"cols":1000,"rows":1}}`); code != "" {
		t.Fatalf("resume at the largest width: %s %s", code, msg)
	}
	if s := e.session("back"); s.State != "running" {
		t.Errorf("resume at 1000x1: state %q, want running", s.State)
	}
}

// TestHugeTerminalIsClampedByTheCLI runs `muster new` the way a user on a
// 4000×4000 terminal would: the CLI clamps its size, so the pane gets
// 1000×1000 and the daemon stays small.
func TestHugeTerminalIsClampedByTheCLI(t *testing.T) {
	e := newEnv(t)
	e.must("daemon")
	cmd := exec.Command(musterBin, "new", "--name", "huge", "--cmd", "bash --norc --noprofile")
	cmd.Env = e.vars
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 4000, Rows: 4000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		ptmx.Close()
	})
	// A 4000×4000 screen is what we must not hold, so the test does not
	// emulate one either: it drains the output and asks the daemon.
	go io.Copy(io.Discard, ptmx)
	if !eventually(func() bool {
		for _, s := range e.ls() {
			if s.Name == "huge" && s.State == "running" {
				return true
			}
		}
		return false
	}) {
		t.Fatal("muster new under a 4000x4000 terminal never started its pane")
	}
	if _, err := io.WriteString(ptmx, "echo typed-$(stty size)\r"); err != nil {
		t.Fatal(err)
	}
	e.waitScreen("huge", "typed-1000 1000")
	if got := e.paneSize("huge"); got != "1000 1000" {
		t.Errorf("pane size %s, want 1000 1000", got)
	}
	// Detach; the daemon and the pane carry on.
	io.WriteString(ptmx, "\x1c")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("muster new exited with %v after the detach key", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("muster new did not detach")
	}
	e.must("daemon", "status")
	if s := e.session("huge"); s.State != "running" {
		t.Errorf("after detach the pane is %q", s.State)
	}
	if got := e.paneSize("huge"); got != "1000 1000" {
		t.Errorf("pane size after detach %s, want 1000 1000", got)
	}
}
