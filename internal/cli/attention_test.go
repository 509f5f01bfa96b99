package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/events"
	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/store"
)

// eventDaemon is a stand-in daemon: a real event engine behind a control
// socket that routes the engine's ops through a proto.Mux, as the daemon
// does.
type eventDaemon struct {
	t    *testing.T
	home string
	e    *events.Engine
	res  *names
	caps map[string]string
	sock string
}

type names struct {
	mu sync.Mutex
	m  map[string]string
}

func (n *names) SessionByName(name string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	id, ok := n.m[name]
	return id, ok
}

func (n *names) SessionName(id string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, v := range n.m {
		if v == id {
			return k, true
		}
	}
	return "", false
}

type lineWriter struct {
	mu sync.Mutex
	c  net.Conn
}

func (w *lineWriter) WriteResponse(r proto.Response) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.c.Write(append(b, '\n'))
	return err
}

func startEventDaemon(t *testing.T) *eventDaemon {
	home, err := os.MkdirTemp("", "mcl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	dirs, _ := paths.Resolve(func(k string) string {
		if k == "MUSTER_HOME" {
			return home
		}
		return ""
	})
	if err := dirs.EnsureRuntime(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	d := &eventDaemon{t: t, home: home, res: &names{m: map[string]string{}}, caps: map[string]string{}}
	d.e, err = events.New(events.Config{Store: st, Resolver: d.res, NotifyCommand: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	d.sock = dirs.EventSocket()
	evln, err := events.Listen(d.sock)
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := net.Listen("unix", dirs.ControlSocket())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { d.e.Serve(ctx, evln) })
	wg.Go(func() {
		for {
			c, err := ctl.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { d.serveControl(ctx, c) })
		}
	})
	t.Cleanup(func() { cancel(); ctl.Close(); wg.Wait(); st.Close() })
	return d
}

func (d *eventDaemon) serveControl(ctx context.Context, c net.Conn) {
	defer c.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	br := bufio.NewReader(c)
	w := &lineWriter{c: c}
	m := proto.NewMux()
	d.e.RegisterControl(m)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var req proto.Request
		if json.Unmarshal(line, &req) != nil {
			return
		}
		if req.Op == proto.OpHello {
			res, _ := json.Marshal(proto.HelloResult{Protocol: proto.ControlVersion, Version: "stand-in"})
			w.WriteResponse(proto.Response{OK: true, Result: res})
			continue
		}
		w.WriteResponse(m.Serve(ctx, req))
	}
}

func (d *eventDaemon) session(name, id string) {
	d.res.mu.Lock()
	d.res.m[name] = id
	d.res.mu.Unlock()
	tok, err := d.e.RegisterSurface(events.Surface{ID: "sf-" + id, SessionID: id, Provider: "claude"})
	if err != nil {
		d.t.Fatal(err)
	}
	d.caps[id] = tok
}

// post sends one event on events.sock as the hook helper would.
func (d *eventDaemon) post(session, id, run string, kind proto.EventKind, msg string) {
	d.t.Helper()
	env := proto.Envelope{SchemaVersion: 1, Capability: d.caps[session], Event: proto.Event{
		SchemaVersion: 1, ID: proto.RawID{RawValue: id}, RunID: proto.RawID{RawValue: run},
		SurfaceID: proto.RawID{RawValue: "sf-" + session}, Provider: "claude", Kind: kind,
		OccurredAt: time.Now().Add(-time.Second), Message: msg, HookName: "Stop",
	}}
	b, _ := json.Marshal(env)
	c, err := net.Dial("unix", d.sock)
	if err != nil {
		d.t.Fatal(err)
	}
	defer c.Close()
	c.Write(append(b, '\n'))
	resp, _ := bufio.NewReader(c).ReadString('\n')
	if resp != `{"ok":true,"inserted":true}`+"\n" {
		d.t.Fatalf("post: %q", resp)
	}
}

// run runs muster with args against the stand-in daemon.
func (d *eventDaemon) run(args ...string) (code int, stdout, stderr string) {
	ios, _, out, errOut := iostreams.Test()
	f := &Factory{IO: ios, Getenv: func(k string) string {
		if k == "MUSTER_HOME" {
			return d.home
		}
		return ""
	}}
	code = Run(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

func TestWaitCommand(t *testing.T) {
	d := startEventDaemon(t)
	d.session("api", "s1")
	d.session("web", "s2")
	d.post("s1", "e1", "r1", proto.KindStarted, "")

	t.Run("usage errors exit 2", func(t *testing.T) {
		for _, args := range [][]string{
			{"wait", "api"},
			{"wait", "--until", "done"},
			{"wait", "api", "--until", "sleeping"},
			{"wait", "api", "--until", ","},
			{"wait", "api", "--until", "done", "--timeout", "soon"},
			{"wait", "api", "--until", "done", "--timeout", "-1s"},
		} {
			if code, _, stderr := d.run(args...); code != ExitUsage {
				t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
			}
		}
	})
	t.Run("already satisfied", func(t *testing.T) {
		code, out, _ := d.run("wait", "api", "--until", "running,waiting")
		if code != ExitOK || out != "api: running\n" {
			t.Fatalf("exit %d, stdout %q", code, out)
		}
	})
	t.Run("timeout exits 1", func(t *testing.T) {
		code, out, stderr := d.run("wait", "api", "--until", "done", "--timeout", "50ms")
		if code != ExitError || out != "api: running\n" || !strings.Contains(stderr, "timed out after 50ms") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
		}
	})
	t.Run("reached by push", func(t *testing.T) {
		done := make(chan string)
		go func() {
			code, out, _ := d.run("wait", "web", "api", "--until", "waiting", "--json")
			if code != ExitOK {
				out = "exit " + string(rune('0'+code))
			}
			done <- out
		}()
		d.post("s2", "e2", "r2", proto.KindApprovalRequested, "")
		d.post("s1", "e3", "r1", proto.KindInputRequested, "")
		var res proto.WaitResult
		out := <-done
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("stdout %q: %v", out, err)
		}
		if res.Status != "reached" || res.Sessions[0].State != "waitingApproval" || res.Sessions[1].State != "waitingInput" {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("unknown session exits 3", func(t *testing.T) {
		code, _, stderr := d.run("wait", "nope", "--until", "done")
		if code != ExitGone || !strings.Contains(stderr, `no session named "nope"`) {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("disappearing session exits 3", func(t *testing.T) {
		d.e.SessionRemoved("s2")
		code, out, stderr := d.run("wait", "web", "--until", "done")
		if code != ExitGone || out != "web: gone\n" || !strings.Contains(stderr, "session web disappeared") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
		}
	})
}

func TestAttentionAckExplainCommands(t *testing.T) {
	d := startEventDaemon(t)
	d.session("api", "s1")
	if code, out, _ := d.run("attention"); code != 0 || out != "Nothing needs your attention.\n" {
		t.Fatalf("empty drawer: %d %q", code, out)
	}
	if code, out, _ := d.run("attention", "--json"); code != 0 || out != "[]\n" {
		t.Fatalf("empty drawer json: %d %q", code, out)
	}
	d.post("s1", "e1", "r1", proto.KindFailed, "API Error: Can't reach the API server")
	code, out, _ := d.run("attention")
	if code != 0 || !strings.Contains(out, "ID  SESSION  REASON") || !strings.Contains(out, "1   api      failed") ||
		!strings.Contains(out, "API Error: Can't reach the API server") {
		t.Fatalf("drawer: %d\n%s", code, out)
	}
	var items []proto.AttentionItem
	_, out, _ = d.run("attention", "--json")
	if json.Unmarshal([]byte(out), &items) != nil || len(items) != 1 || items[0].SessionName != "api" || items[0].Reason != "failed" {
		t.Fatalf("drawer json: %s", out)
	}

	x := func() string { _, out, _ := d.run("explain", "api"); return out }()
	flat := strings.Join(strings.Fields(x), " ")
	for _, want := range []string{"api: failed", "run r1", "because failed from hook Stop (claude), event e1", "attention: #1 failed: API Error", "recent events:", "failed Stop r1 applied"} {
		if !strings.Contains(flat, want) {
			t.Errorf("explain lacks %q:\n%s", want, x)
		}
	}
	var ex proto.Explanation
	if _, out, _ := d.run("explain", "api", "--json"); json.Unmarshal([]byte(out), &ex) != nil || *ex.State != "failed" || ex.Because.HookName != "Stop" {
		t.Fatalf("explain json: %s", out)
	}
	if code, _, stderr := d.run("explain", "nope"); code != ExitError || !strings.Contains(stderr, `no session named "nope"`) {
		t.Fatalf("explain unknown: %d %q", code, stderr)
	}

	for _, args := range [][]string{{"ack"}, {"ack", "x"}, {"ack", "0"}, {"ack", "1", "--all"}} {
		if code, _, _ := d.run(args...); code != ExitUsage {
			t.Errorf("%q: exit %d", args, code)
		}
	}
	if code, _, stderr := d.run("ack", "99"); code != ExitError || !strings.Contains(stderr, "no attention item 99") {
		t.Fatalf("ack unknown: %d %q", code, stderr)
	}
	if code, out, _ := d.run("ack", "#1"); code != 0 || out != "acknowledged 1\n" {
		t.Fatalf("ack: %d %q", code, out)
	}
	if code, out, _ := d.run("ack", "1"); code != 0 || out != "1 was already resolved\n" {
		t.Fatalf("ack again: %d %q", code, out)
	}
	if code, out, _ := d.run("ack", "--all"); code != 0 || out != "Nothing was open.\n" {
		t.Fatalf("ack --all: %d %q", code, out)
	}
	if code, out, _ := d.run("attention", "--all"); code != 0 || !strings.Contains(out, "resolved: acknowledged") {
		t.Fatalf("drawer --all: %d\n%s", code, out)
	}
}

func TestWaitFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var got *waitOptions
	cmd := newWaitCmdWith(&Factory{IO: ios}, func(o *waitOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"a", "b", "--until", " done, attention ", "--timeout", "10m", "--any"})
	cmd.SetOut(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Names, ",") != "a,b" || strings.Join(got.Until, ",") != "done,attention" || got.Timeout != 10*time.Minute || !got.Any {
		t.Fatalf("options %+v", got)
	}
}
