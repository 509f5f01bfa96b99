package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"sync"
	"testing"

	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
)

// startCannedDaemon serves control.sock under a new MUSTER_HOME with the
// handlers register adds to a proto.Mux, the daemon's own dispatcher, and
// returns that home. Handlers answer fixed values, so a command's output
// depends on nothing else; proto.Handle checks each one against the op
// table's types.
func startCannedDaemon(t *testing.T, register func(m *proto.Mux)) string {
	t.Helper()
	// A short path: a socket path must stay under about 104 bytes.
	home, err := os.MkdirTemp("", "mcd")
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
	m := proto.NewMux()
	register(m)
	ln, err := net.Listen("unix", dirs.ControlSocket())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { serveCanned(ctx, c, m) })
		}
	})
	t.Cleanup(func() { cancel(); ln.Close(); wg.Wait() })
	return home
}

func serveCanned(ctx context.Context, c net.Conn, m *proto.Mux) {
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	br := bufio.NewReader(c)
	enc := json.NewEncoder(c)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var req proto.Request
		if json.Unmarshal(line, &req) != nil {
			return
		}
		resp := proto.Response{OK: true}
		if req.Op == proto.OpHello {
			// The connection answers hello, as the daemon's does.
			resp.Result, _ = json.Marshal(proto.HelloResult{Protocol: proto.ControlVersion, Version: "canned"})
		} else {
			resp = m.Serve(ctx, req)
		}
		if enc.Encode(resp) != nil {
			return
		}
	}
}

// answer registers a handler for op that returns v whatever it is asked.
func answer[A, R any](m *proto.Mux, op string, v R) {
	proto.Handle(m, op, func(context.Context, A) (R, error) { return v, nil })
}
