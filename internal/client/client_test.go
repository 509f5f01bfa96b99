package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
)

// fakeDaemon answers control.sock with answer, one response per request
// line, until the test ends. It records the ops it was sent.
type fakeDaemon struct {
	dirs paths.Dirs
	mu   sync.Mutex
	ops  []string
}

func startFake(t *testing.T, answer func(req proto.Request) proto.Response) *fakeDaemon {
	t.Helper()
	// A short path: socket paths are limited to about 100 bytes.
	home, err := os.MkdirTemp("", "mcl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	dirs, err := paths.Resolve(func(k string) string {
		if k == "MUSTER_HOME" {
			return home
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := dirs.EnsureRuntime(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", dirs.ControlSocket())
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeDaemon{dirs: dirs}
	var wg sync.WaitGroup
	var conns sync.Map
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(c, true)
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadBytes('\n')
					if err != nil {
						return
					}
					var req proto.Request
					json.Unmarshal(line, &req)
					f.mu.Lock()
					f.ops = append(f.ops, req.Op)
					f.mu.Unlock()
					resp := answer(req)
					if resp.Error == hangUp.Error {
						return
					}
					if resp.OK || resp.Error != nil {
						b, _ := json.Marshal(resp)
						c.Write(append(b, '\n'))
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		conns.Range(func(c, _ any) bool { c.(net.Conn).Close(); return true })
		wg.Wait()
	})
	return f
}

func (f *fakeDaemon) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ops...)
}

// hangUp makes the fake close the connection without an answer, as a
// daemon killed under a call does.
var hangUp = proto.Response{Error: &proto.Error{Code: "hang-up"}}

func ok(v any) proto.Response {
	b, _ := json.Marshal(v)
	return proto.Response{OK: true, Result: b}
}

// protocol1 answers as a daemon of control protocol 1 did: no hello, and
// an unknown op is unsupported (or, to a process inside a pane, refused).
func protocol1(unknown string) func(proto.Request) proto.Response {
	return func(req proto.Request) proto.Response {
		switch req.Op {
		case "status":
			return ok(map[string]any{"pid": 4242, "version": "0.1.0", "started_at": "2026-01-01T00:00:00Z", "home": "/h", "sessions": 3, "panes": 1})
		case "stop":
			return ok(nil)
		case "ls":
			return ok([]proto.SessionInfo{})
		}
		if unknown == proto.CodeForbidden {
			return proto.Response{Error: proto.Errorf(proto.CodeForbidden, "refused: this process runs inside muster pane \"a\"; op %q is not allowed from a pane", req.Op)}
		}
		return proto.Response{Error: proto.Errorf(proto.CodeUnsupported, "unknown op %q", req.Op)}
	}
}

// TestNewClientOldDaemon: a client of this version facing a daemon from
// before the version exchange fails with the one line that says what to
// do, and can still stop it.
func TestNewClientOldDaemon(t *testing.T) {
	want := "the running daemon is version 0.1.0 (control protocol 1), this client is version 0.2.0 (control protocol " + strconv.Itoa(proto.ControlVersion) + "); run `muster daemon restart` to replace it, keeping every pane"
	for _, unknown := range []string{proto.CodeUnsupported, proto.CodeForbidden} {
		t.Run(unknown, func(t *testing.T) {
			f := startFake(t, protocol1(unknown))
			c, err := Dial(t.Context(), f.dirs, "0.2.0")
			pe, isProto := errors.AsType[*proto.Error](err)
			if c != nil || !isProto || pe.Code != proto.CodeVersion || pe.Message != want || pe.Hint != "" {
				t.Fatalf("Dial = %v, %#v\nwant %s", c, err, want)
			}
			// Ensure does not start a daemon of its own over it.
			if _, err := Ensure(t.Context(), f.dirs, "0.2.0"); err == nil || err.Error() != want {
				t.Fatalf("Ensure = %v", err)
			}
			// No op but hello and status reached it.
			for _, op := range f.sent() {
				if op != proto.OpHello && op != proto.OpStatus {
					t.Errorf("the client sent %q to a daemon it cannot talk to", op)
				}
			}
			c, err = DialFrozen(t.Context(), f.dirs)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Call(t.Context(), proto.OpList, nil, nil); err == nil {
				t.Error("ls went out without a version exchange")
			}
			var st proto.DaemonStatus
			if err := c.Call(t.Context(), proto.OpStatus, nil, &st); err != nil || st.Version != "0.1.0" {
				t.Errorf("status of an old daemon = %+v, %v", st, err)
			}
			if err := c.Call(t.Context(), proto.OpStop, nil, nil); err != nil {
				t.Errorf("stop of an old daemon: %v", err)
			}
		})
	}
}

// TestDaemonRefusesHello: a newer daemon's refusal is passed on as is, and
// a daemon that accepts hello but says another protocol is refused too.
func TestDaemonRefusesHello(t *testing.T) {
	newer := proto.ControlVersion + 1
	refusal := proto.VersionMismatch("0.3.0", newer, "0.2.0", proto.ControlVersion)
	f := startFake(t, func(req proto.Request) proto.Response { return proto.Response{Error: refusal} })
	if _, err := Dial(t.Context(), f.dirs, "0.2.0"); err == nil || err.Error() != refusal.Message {
		t.Errorf("Dial = %v, want %q", err, refusal.Message)
	}
	g := startFake(t, func(req proto.Request) proto.Response {
		return ok(proto.HelloResult{Protocol: newer, Version: "0.3.0"})
	})
	_, err := Dial(t.Context(), g.dirs, "0.2.0")
	if pe, ok := errors.AsType[*proto.Error](err); !ok || pe.Code != proto.CodeVersion || pe.Message != refusal.Message {
		t.Errorf("Dial = %v, want %q", err, refusal.Message)
	}
}

// olderDaemon answers as a daemon of control protocol older does: hello
// of any other protocol refused, its status saying which it speaks.
func olderDaemon(older int) func(req proto.Request) proto.Response {
	return func(req proto.Request) proto.Response {
		switch req.Op {
		case proto.OpHello:
			var h proto.Hello
			json.Unmarshal(req.Args, &h)
			if h.Protocol != older {
				return proto.Response{Error: proto.VersionMismatch("0.1.9", older, h.Version, h.Protocol)}
			}
			return ok(proto.HelloResult{Protocol: older, Version: "0.1.9"})
		case proto.OpStatus:
			return ok(proto.DaemonStatus{Version: "0.1.9", Protocol: older})
		case proto.OpList:
			return ok([]proto.SessionInfo{{Name: "a"}})
		}
		return proto.Response{Error: proto.Errorf(proto.CodeUnsupported, "unknown op %q", req.Op)}
	}
}

// TestClientSettlesOnAnOlderDaemonsProtocol: a daemon of an older
// protocol this client still speaks refuses its hello, and the connection
// settles on the daemon's protocol and carries calls; one of a protocol
// it does not speak gets the refusal as before.
func TestClientSettlesOnAnOlderDaemonsProtocol(t *testing.T) {
	older := proto.ControlVersion - 1
	if !proto.Speaks(older) {
		t.Skipf("this build speaks no protocol older than %d", proto.ControlVersion)
	}
	f := startFake(t, olderDaemon(older))
	c, err := Dial(t.Context(), f.dirs, "0.2.0")
	if err != nil {
		t.Fatalf("Dial to a daemon of protocol %d: %v", older, err)
	}
	defer c.Close()
	if c.Protocol() != older {
		t.Errorf("Protocol() = %d, want %d", c.Protocol(), older)
	}
	var list []proto.SessionInfo
	if err := c.Call(t.Context(), proto.OpList, nil, &list); err != nil || len(list) != 1 {
		t.Errorf("ls at protocol %d = %+v, %v", older, list, err)
	}

	tooOld := proto.MinControlVersion - 1
	g := startFake(t, olderDaemon(tooOld))
	want := proto.VersionMismatch("0.1.9", tooOld, "0.2.0", proto.ControlVersion).Message
	if _, err := Dial(t.Context(), g.dirs, "0.2.0"); err == nil || err.Error() != want {
		t.Errorf("Dial to a daemon of protocol %d = %v, want %q", tooOld, err, want)
	}
	for _, op := range g.sent() {
		if op != proto.OpHello && op != proto.OpStatus {
			t.Errorf("the client sent %q to a daemon it cannot talk to", op)
		}
	}
}

func hello(req proto.Request) (proto.Response, bool) {
	if req.Op != proto.OpHello {
		return proto.Response{}, false
	}
	var h proto.Hello
	json.Unmarshal(req.Args, &h)
	if h.Protocol != proto.ControlVersion {
		return proto.Response{Error: proto.Errorf(proto.CodeBadRequest, "wrong hello %s", req.Args)}, true
	}
	return ok(proto.HelloResult{Protocol: proto.ControlVersion, Version: "now"}), true
}

// TestCallHonoursContext: a call whose ctx ends returns at once, even
// when the daemon never answers, and the connection carries no more
// calls; a deadline bounds a call the same way.
func TestCallHonoursContext(t *testing.T) {
	f := startFake(t, func(req proto.Request) proto.Response {
		if r, ok := hello(req); ok {
			return r
		}
		if req.Op == proto.OpList {
			return ok([]proto.SessionInfo{{Name: "a"}})
		}
		return proto.Response{} // never answers
	})
	c, err := Dial(t.Context(), f.dirs, "now")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var list []proto.SessionInfo
	if err := c.Call(t.Context(), proto.OpList, nil, &list); err != nil || len(list) != 1 {
		t.Fatalf("ls = %v, %v", list, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, proto.OpSend, proto.SendArgs{Name: "a", Text: "x"}, nil) }()
	for !slices.Contains(f.sent(), proto.OpSend) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call = %v", err)
	}
	if err := c.Call(t.Context(), proto.OpList, nil, &list); err == nil {
		t.Error("a connection with a cancelled call in flight carried another")
	}

	c2, err := Dial(t.Context(), f.dirs, "now")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	dctx, dcancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer dcancel()
	if err := c2.Call(dctx, proto.OpSend, proto.SendArgs{Name: "a"}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("call past its deadline = %v", err)
	}
	if err := c2.Call(t.Context(), "nosuch", nil, nil); err == nil {
		t.Error("an op outside proto.Ops went out")
	}
}

func TestDialWithoutDaemon(t *testing.T) {
	home, err := os.MkdirTemp("", "mcl")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	dirs, _ := paths.Resolve(func(k string) string {
		if k == "MUSTER_HOME" {
			return home
		}
		return ""
	})
	if _, err := Dial(t.Context(), dirs, "now"); !errors.Is(err, ErrDaemonNotRunning) {
		t.Errorf("Dial = %v, want ErrDaemonNotRunning", err)
	}
}

// TestIdempotentCallRetriesOnce: a daemon that dies under ls (the
// connection ends without an answer) is asked again once, on a new
// connection; kill, which must not run twice, reports the lost
// connection instead; a second death in a row is reported too.
func TestIdempotentCallRetriesOnce(t *testing.T) {
	var mu sync.Mutex
	hangUps := map[string]int{"ls": 1, "kill": 1, "capture": 2}
	f := startFake(t, func(req proto.Request) proto.Response {
		mu.Lock()
		defer mu.Unlock()
		if req.Op == proto.OpHello {
			return ok(proto.HelloResult{Protocol: proto.ControlVersion, Version: "t"})
		}
		if hangUps[req.Op] > 0 {
			hangUps[req.Op]--
			return hangUp
		}
		return ok([]proto.SessionInfo{{Name: "a"}})
	})
	c, err := Dial(t.Context(), f.dirs, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var list []proto.SessionInfo
	if err := c.Call(t.Context(), proto.OpList, nil, &list); err != nil || len(list) != 1 {
		t.Fatalf("ls after the daemon hung up once = %v, %v; want the answer of the second try", list, err)
	}
	if err := c.Call(t.Context(), proto.OpKill, proto.Target{Name: "a"}, nil); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("kill under a hang-up = %v; want ErrConnectionLost, not a retry", err)
	}
	c2, err := Dial(t.Context(), f.dirs, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.Call(t.Context(), proto.OpCapture, proto.CaptureArgs{Name: "a"}, nil); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("capture under two hang-ups = %v; want ErrConnectionLost after one retry", err)
	}
	if n := strings.Count(strings.Join(f.sent(), " "), "kill"); n != 1 {
		t.Errorf("kill was sent %d times; want once", n)
	}
}

// TestSilentDaemonTimesOut: a daemon that accepts but never answers (one
// stopped with SIGSTOP) ends a call with an error naming its socket.
func TestSilentDaemonTimesOut(t *testing.T) {
	f := startFake(t, func(req proto.Request) proto.Response {
		if req.Op == proto.OpHello {
			return proto.Response{} // no answer
		}
		return ok(nil)
	})
	_, err := Dial(t.Context(), f.dirs, "t")
	na, isNoAnswer := errors.AsType[*NoAnswerError](err)
	if !isNoAnswer || na.Op != proto.OpHello || !strings.Contains(err.Error(), f.dirs.ControlSocket()) {
		t.Fatalf("Dial to a silent daemon = %v; want a *NoAnswerError for hello naming %s", err, f.dirs.ControlSocket())
	}
}

// notASocket is a stream to a daemon that is not a *net.UnixConn, as a
// relay through ssh is.
type notASocket struct{ net.Conn }

// TestOverAStreamThatIsNotASocket: Over runs the version exchange over
// any stream and then carries calls; a connection lost under an
// idempotent call names the far end and is not dialled again (Over knows
// no way back to it).
func TestOverAStreamThatIsNotASocket(t *testing.T) {
	f := startFake(t, func(req proto.Request) proto.Response {
		if r, ok := hello(req); ok {
			return r
		}
		if req.Op == proto.OpStatus {
			return hangUp
		}
		return ok([]proto.SessionInfo{{Name: "far"}})
	})
	conn, err := net.Dial("unix", f.dirs.ControlSocket())
	if err != nil {
		t.Fatal(err)
	}
	c, err := Over(t.Context(), notASocket{conn}, "host h1", "0.2.0")
	if err != nil {
		t.Fatalf("Over: %v", err)
	}
	defer c.Close()
	if c.Protocol() != proto.ControlVersion {
		t.Errorf("Protocol() = %d, want %d", c.Protocol(), proto.ControlVersion)
	}
	var list []proto.SessionInfo
	if err := c.Call(t.Context(), proto.OpList, nil, &list); err != nil || len(list) != 1 || list[0].Name != "far" {
		t.Fatalf("ls over the stream = %+v, %v", list, err)
	}
	err = c.Call(t.Context(), proto.OpStatus, nil, nil)
	if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "host h1") {
		t.Errorf("status on a stream that hung up = %v, want a lost connection naming host h1", err)
	}
	if got, want := f.sent(), []string{proto.OpHello, proto.OpList, proto.OpStatus}; !slices.Equal(got, want) {
		t.Errorf("the fake was sent %v, want %v (no redial)", got, want)
	}
}
