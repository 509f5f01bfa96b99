package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/poll"
)

// userTerminal is the terminal a user runs `muster attach` in: the test
// types on its master side and sees what reaches the screen there.
type userTerminal struct {
	master, slave *os.File
	mu            sync.Mutex
	screen        bytes.Buffer
}

func newUserTerminal(t *testing.T) *userTerminal {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	pty.Setsize(master, &pty.Winsize{Cols: 80, Rows: 24})
	// The client puts the terminal in raw mode before it passes it.
	if _, err := term.MakeRaw(int(slave.Fd())); err != nil {
		t.Fatal(err)
	}
	u := &userTerminal{master: master, slave: slave}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			u.mu.Lock()
			u.screen.Write(buf[:n])
			u.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		slave.Close()
		master.Close()
		<-done
	})
	return u
}

// seen returns what reached the screen since the last call.
func (u *userTerminal) seen() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.screen.String()
	u.screen.Reset()
	return s
}

// attachPassing sends an attach request that passes fd, as `muster attach`
// does with the user's terminal.
func attachPassing(t *testing.T, c *conn, args proto.AttachArgs, fd int) proto.AttachResult {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"op": proto.OpAttach, "args": args})
	c.c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, _, err := c.c.(*net.UnixConn).WriteMsgUnix(append(b, '\n'), syscall.UnixRights(fd), nil); err != nil {
		t.Fatal(err)
	}
	line, err := c.br.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var resp proto.Response
	var res proto.AttachResult
	if json.Unmarshal(line, &resp) != nil || !resp.OK || json.Unmarshal(resp.Result, &res) != nil {
		t.Fatalf("attach: %s", line)
	}
	return res
}

// nextFrame reads frames until one of type typ.
func nextFrame(t *testing.T, c *conn, typ byte) []byte {
	t.Helper()
	c.c.SetDeadline(time.Now().Add(20 * time.Second))
	for {
		got, payload, err := proto.ReadFrame(c.br, nil)
		if err != nil {
			t.Fatalf("waiting for frame %d: %v", typ, err)
		}
		if got == typ {
			return payload
		}
	}
}

// TestAttachHoldsThePassedTerminal: an attach that passes the user's
// terminal has the daemon write the pane to it, read its keys and run
// copy mode on it, hand it back only for copy mode's pager (taking it
// again on resume) and for detach.
func TestAttachHoldsThePassedTerminal(t *testing.T) {
	d := startDaemon(t)
	c := d.dial()
	c.must(proto.OpNew, proto.NewArgs{Name: "s", Dir: t.TempDir(), Cmd: "cat", Cols: 80, Rows: 24}, nil)
	u := newUserTerminal(t)
	a := d.dial()
	res := attachPassing(t, a, proto.AttachArgs{Name: "s", Cols: 80, Rows: 24, Terminal: true,
		DetachKey: `ctrl-\`, CopyKey: "ctrl-^", Hint: "the hint"}, int(u.slave.Fd()))
	if !res.Direct {
		t.Fatalf("attach = %+v; want the daemon to hold the terminal", res)
	}
	screen := ""
	waitFor := func(want, what string) {
		t.Helper()
		screen = ""
		poll.Wait(t, 20*time.Second, func() bool {
			screen += u.seen()
			return strings.Contains(screen, want)
		}, func() string { return what + " on the terminal, not " + screen })
	}
	waitFor("the hint", "the first repaint and its hint")

	// Keys typed on the terminal reach the pane; its echo, the terminal.
	u.master.Write([]byte("typed-here\r"))
	waitFor("typed-here", "the echo")

	// The copy key opens copy mode here, on the pane's history, and the
	// keys typed after it are copy mode's, not the pane's.
	u.master.Write([]byte("before\x1ekk"))
	waitFor("[copy mode] line", "copy mode's status line")
	u.master.Write([]byte("jj"))
	waitFor("[copy mode] line", "copy mode redrawn after a key")
	var cap proto.CaptureResult
	c.must(proto.OpCapture, proto.CaptureArgs{Name: "s"}, &cap)
	if !strings.Contains(cap.Text, "before") || strings.Contains(cap.Text, "kk") || strings.Contains(cap.Text, "jj") {
		t.Fatalf("the pane shows %q; want the keys before the copy key only", cap.Text)
	}

	// Its pager runs in the client: the daemon hands the terminal back
	// with the history in a file, reads none of the keys meanwhile, and
	// takes it again on resume, showing what went wrong.
	u.master.Write([]byte("o"))
	var hb proto.Handback
	json.Unmarshal(nextFrame(t, a, proto.FrameHandback), &hb)
	if hb.Reason != proto.HandbackOpen || hb.Editor || hb.File == "" {
		t.Fatalf("handback = %+v; want open in the pager, with a file", hb)
	}
	if text, err := os.ReadFile(hb.File); err != nil || !strings.Contains(string(text), "typed-here") {
		t.Fatalf("the pager's file holds %q (%v); want the pane's history", text, err)
	}
	u.master.Write([]byte("pager-keys"))
	buf := make([]byte, 64)
	u.slave.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _ := u.slave.Read(buf); string(buf[:n]) != "pager-keys" {
		t.Fatalf("the client read %q from its terminal; want the keys typed to its pager", buf[:n])
	}
	u.seen()
	proto.WriteFrame(a.c, proto.FrameResume, []byte("less: not found"))
	waitFor("less: not found", "copy mode again, with the pager's error,")
	if _, err := os.Stat(hb.File); !os.IsNotExist(err) {
		t.Errorf("the pager's file is still there after resume (%v)", err)
	}

	// q leaves copy mode: the pane is repainted and takes keys again.
	u.master.Write([]byte("q"))
	waitFor("typed-here", "the repaint after copy mode")
	u.master.Write([]byte("after-copy\r"))
	waitFor("after-copy", "the echo after copy mode")

	// The detach key hands it back for good; nothing more reaches it.
	u.master.Write([]byte("\x1c"))
	json.Unmarshal(nextFrame(t, a, proto.FrameHandback), &hb)
	if hb.Reason != proto.HandbackDetach {
		t.Fatalf("handback = %+v; want detach", hb)
	}
	u.seen()
	c.must(proto.OpSend, proto.SendArgs{Name: "s", Text: "after-detach", Enter: true}, nil)
	poll.Wait(t, 20*time.Second, func() bool {
		c.must(proto.OpCapture, proto.CaptureArgs{Name: "s"}, &cap)
		return strings.Count(cap.Text, "after-detach") >= 2
	}, func() string { return "the pane to echo what was sent" })
	if s := u.seen(); strings.Contains(s, "after-detach") {
		t.Fatalf("after the detach handback the terminal got %q", s)
	}
}

// TestAttachKeepsAFileThatIsNoTerminal: a passed file that is no terminal
// leaves the client relaying the pane over the socket.
func TestAttachKeepsAFileThatIsNoTerminal(t *testing.T) {
	d := startDaemon(t)
	c := d.dial()
	c.must(proto.OpNew, proto.NewArgs{Name: "s", Dir: t.TempDir(), Cmd: "cat", Cols: 80, Rows: 24}, nil)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	a := d.dial()
	res := attachPassing(t, a, proto.AttachArgs{Name: "s", Cols: 80, Rows: 24, Terminal: true, DetachKey: `ctrl-\`}, int(w.Fd()))
	if res.Direct {
		t.Fatal("a pipe was taken for a terminal")
	}
	nextFrame(t, a, proto.FrameSnapshot)
}

// TestPassedFilesAreNotKept: descriptors a client passes with requests
// that take none, many at once, are closed: the daemon holds no file of a
// client's after the connection ends.
func TestPassedFilesAreNotKept(t *testing.T) {
	d := startDaemon(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// Only the descriptors of the passed pipe are counted: the daemon runs
	// in this process, and its own files (the history index it opens in
	// the background) come and go.
	pipe, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", r.Fd()))
	if err != nil {
		t.Skip("no /proc here")
	}
	count := func() int {
		ents, _ := os.ReadDir("/proc/self/fd")
		n := 0
		for _, e := range ents {
			if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == pipe {
				n++
			}
		}
		return n
	}
	c := d.dial()
	c.sessions()
	fds := []int{int(r.Fd()), int(w.Fd()), int(r.Fd()), int(w.Fd()), int(r.Fd()), int(w.Fd()), int(r.Fd()), int(w.Fd())}
	for range 3 {
		b, _ := json.Marshal(map[string]any{"op": proto.OpList})
		if _, _, err := c.c.(*net.UnixConn).WriteMsgUnix(append(b, '\n'), syscall.UnixRights(fds...), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.br.ReadBytes('\n'); err != nil {
			t.Fatal(err)
		}
	}
	// The test's own two ends, and at most the one a request may take.
	if n := count(); n > 3 {
		t.Errorf("with the connection open %d descriptors name the passed pipe; want at most 3", n)
	}
	c.c.Close()
	poll.Wait(t, 20*time.Second, func() bool { return count() == 2 },
		func() string {
			return fmt.Sprintf("the passed pipe's descriptors to be closed with the connection: %d left, want the test's 2", count())
		})
}

// TestOlderClientKeepsItsTerminal: a client of the older protocol this
// daemon still speaks is answered in it and served, and its attach
// relays: the daemon does not take the terminal it passed, whose
// handbacks that client would misread, and the pane's frames come over
// the socket.
func TestOlderClientKeepsItsTerminal(t *testing.T) {
	older := proto.ControlVersion - 1
	if !proto.Speaks(older) || proto.DirectAttach(older) {
		t.Skipf("this build speaks no older protocol without a direct attach (control protocol %d)", proto.ControlVersion)
	}
	d := startDaemon(t)
	c := d.dial()
	c.must(proto.OpNew, proto.NewArgs{Name: "s", Dir: t.TempDir(), Cmd: "cat", Cols: 80, Rows: 24}, nil)
	a := d.dialRaw()
	var res proto.HelloResult
	a.must(proto.OpHello, proto.Hello{Protocol: older, Version: "older"}, &res)
	if res.Protocol != older || res.Version != "test" {
		t.Fatalf("hello of protocol %d = %+v; want it answered in that protocol", older, res)
	}
	var list []proto.SessionInfo
	a.must(proto.OpList, nil, &list)
	if len(list) != 1 || list[0].Name != "s" {
		t.Fatalf("ls at protocol %d = %+v", older, list)
	}
	u := newUserTerminal(t)
	got := attachPassing(t, a, proto.AttachArgs{Name: "s", Cols: 80, Rows: 24, Terminal: true, DetachKey: `ctrl-\`}, int(u.slave.Fd()))
	if got.Direct {
		t.Fatalf("attach at protocol %d = %+v; want the client to keep its terminal", older, got)
	}
	if err := proto.WriteFrame(a.c, proto.FrameInput, []byte("relayed\r")); err != nil {
		t.Fatal(err)
	}
	var frames string
	poll.Wait(t, 20*time.Second, func() bool {
		frames += string(nextFrame(t, a, proto.FrameOutput))
		return strings.Contains(frames, "relayed")
	}, func() string { return "the echo never came in an output frame: " + frames })
	if s := u.seen(); s != "" {
		t.Errorf("the daemon wrote %q to a terminal it should not hold", s)
	}
}
