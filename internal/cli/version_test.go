package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
)

// startProtocol1Daemon answers control.sock as a daemon of control
// protocol 1 did (no hello: an unknown op), and reports whether it was
// told to stop.
func startProtocol1Daemon(t *testing.T) (home string, stopped func() bool) {
	t.Helper()
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
	ln, err := net.Listen("unix", dirs.ControlSocket())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	stop := false
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
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
					var resp string
					switch req.Op {
					case "status":
						resp = `{"ok":true,"result":{"pid":4242,"version":"0.0.9","started_at":"2026-01-01T00:00:00Z","home":"/h","sessions":2,"panes":1}}`
					case "stop":
						mu.Lock()
						stop = true
						mu.Unlock()
						c.Write([]byte(`{"ok":true}` + "\n"))
						return
					default:
						b, _ := json.Marshal(proto.Response{Error: proto.Errorf(proto.CodeUnsupported, "unknown op %q", req.Op)})
						resp = string(b)
					}
					c.Write([]byte(resp + "\n"))
				}
			})
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return home, func() bool { mu.Lock(); defer mu.Unlock(); return stop }
}

// TestOlderDaemon: after an upgrade, commands facing the daemon of the old
// binary say so in one line, and `muster daemon stop` still stops it.
func TestOlderDaemon(t *testing.T) {
	home, stopped := startProtocol1Daemon(t)
	run := func(args ...string) (int, string, string) {
		ios, _, out, errOut := iostreams.Test()
		f := &Factory{IO: ios, Getenv: func(k string) string {
			if k == "MUSTER_HOME" {
				return home
			}
			return ""
		}}
		return Run(context.Background(), f, args), out.String(), errOut.String()
	}
	want := "muster: the running daemon is version 0.0.9 (control protocol 1), this client is version " + Version +
		" (control protocol " + strconv.Itoa(proto.ControlVersion) + "); run `muster daemon restart` to replace it, keeping every pane\n"
	for _, args := range [][]string{{"ls"}, {"attention"}, {"send", "a", "x"}} {
		code, stdout, stderr := run(args...)
		if code != ExitError || stdout != "" || stderr != want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q\nwant exit 1 and %q", args, code, stdout, stderr, want)
		}
	}
	if code, stdout, _ := run("daemon", "status"); code != 0 || !strings.Contains(stdout, "muster daemon 0.0.9 running, pid 4242") ||
		!strings.Contains(stdout, "control protocol 1 and this muster "+strconv.Itoa(proto.ControlVersion)+": run `muster daemon restart` to replace it (it keeps every pane)") {
		t.Errorf("daemon status: exit %d, %q", code, stdout)
	}
	if code, _, stderr := run("daemon", "stop"); code != 0 || !stopped() {
		t.Errorf("daemon stop: exit %d, stderr %q, stopped %v", code, stderr, stopped())
	}
}
