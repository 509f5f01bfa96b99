package web_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// dialTerm opens a terminal WebSocket with the given headers; it returns
// the HTTP status of a refused upgrade.
func dialTerm(ctx context.Context, srv *server, name, query string, hdr http.Header) (*websocket.Conn, int, error) {
	u := "ws://" + srv.url.Host + "/term/" + url.PathEscape(name) + "/ws" + query
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: hdr})
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	return c, status, err
}

func authed(srv *server) http.Header {
	return http.Header{"Authorization": {"Bearer " + srv.token}, "Origin": {srv.base}}
}

// TestHostileClients: each refused or bounded, the daemon unaffected.
func TestHostileClients(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.shell("h")
	srv := e.serve("--interactive")
	ctx := t.Context()

	refused := []struct {
		name string
		hdr  http.Header
		want int
	}{
		{"no token", http.Header{"Origin": {srv.base}}, http.StatusUnauthorized},
		{"wrong token", http.Header{"Authorization": {"Bearer " + strings.Repeat("A", 26)}, "Origin": {srv.base}}, http.StatusUnauthorized},
		{"wrong cookie", http.Header{"Cookie": {"muster_serve_" + srv.url.Port() + "=" + strings.Repeat("B", 26)}, "Origin": {srv.base}}, http.StatusUnauthorized},
		{"cross-origin page", http.Header{"Authorization": {"Bearer " + srv.token}, "Origin": {"http://evil.example"}}, http.StatusForbidden},
		{"same host, other port", http.Header{"Authorization": {"Bearer " + srv.token}, "Origin": {"http://127.0.0.1:1"}}, http.StatusForbidden},
		{"no Origin", http.Header{"Authorization": {"Bearer " + srv.token}}, http.StatusForbidden},
		{"Host not allowed", http.Header{"Authorization": {"Bearer " + srv.token}, "Origin": {"http://rebind.example:" + srv.url.Port()}, "Host": {"rebind.example:" + srv.url.Port()}}, http.StatusMisdirectedRequest},
	}
	for _, tt := range refused {
		hdr := tt.hdr.Clone()
		u := "ws://" + srv.url.Host + "/term/h/ws?control=1"
		opts := &websocket.DialOptions{HTTPHeader: hdr}
		if h := hdr.Get("Host"); h != "" {
			hdr.Del("Host")
			opts.Host = h
		}
		c, resp, err := websocket.Dial(ctx, u, opts)
		if err == nil {
			c.CloseNow()
			t.Errorf("%s: the upgrade succeeded", tt.name)
			continue
		}
		if resp == nil || resp.StatusCode != tt.want {
			t.Errorf("%s: %v, want status %d", tt.name, err, tt.want)
		}
	}

	// A cross-origin page posting: refused even with the cookie.
	post := func(origin string) int {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.base+"/api/v1/attention/1/ack", nil)
		req.AddCookie(&http.Cookie{Name: "muster_serve_" + srv.url.Port(), Value: srv.token})
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("http://evil.example"); code != http.StatusForbidden {
		t.Errorf("cross-origin POST with the cookie: %d, want 403", code)
	}
	if code := post(""); code != http.StatusForbidden {
		t.Errorf("POST with the cookie and no Origin: %d, want 403", code)
	}
	// No state-changing GET: the ack route answers POST only.
	if resp, err := http.Get(srv.base + "/api/v1/attention/1/ack"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET of the ack route: %d", resp.StatusCode)
		}
	}

	// A read-only view of an interactive server drops keys.
	c, _, err := dialTerm(ctx, srv, "h", "", authed(srv))
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(e.home, "pwned-readonly")
	c.Write(ctx, websocket.MessageBinary, []byte("touch "+marker+"\r"))

	// A 100 MB message: the connection closes before it is read.
	big, _, err := dialTerm(ctx, srv, "h", "?control=1", authed(srv))
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 100<<20)
	rand.Read(payload[:1024])
	werr := big.Write(ctx, websocket.MessageBinary, payload)
	var rerr error
	for rerr == nil {
		_, _, rerr = big.Read(ctx)
	}
	if werr == nil && websocket.CloseStatus(rerr) != websocket.StatusMessageTooBig {
		t.Errorf("a 100 MB message: write %v, then read %v; want the server to close with 1009", werr, rerr)
	}
	big.CloseNow()
	payload = nil

	// 1,000 connections at once: at most the bound are served, the rest
	// refused before the upgrade.
	var open, busy, other atomic.Int64
	var mu sync.Mutex
	var conns []*websocket.Conn
	var wg sync.WaitGroup
	for range 1000 {
		wg.Go(func() {
			dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			c, status, err := dialTerm(dctx, srv, "h", "", authed(srv))
			switch {
			case err == nil:
				open.Add(1)
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			case status == http.StatusServiceUnavailable:
				busy.Add(1)
			default:
				other.Add(1)
			}
		})
	}
	wg.Wait()
	t.Logf("1000 terminal connections: %d open, %d refused busy, %d other", open.Load(), busy.Load(), other.Load())
	if open.Load() > 16 || open.Load()+busy.Load() != 1000 {
		t.Errorf("1000 connections: %d open, %d refused as busy, %d failed otherwise; want at most 16 open and the rest refused", open.Load(), busy.Load(), other.Load())
	}
	// The daemon still answers and the pane still works.
	e.must("ls")
	e.must("send", "h", "--enter", "echo alive-$((5*5))")
	e.waitScreen("h", "alive-25")
	for _, c := range conns {
		c.CloseNow()
	}
	c.CloseNow()
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a read-only view's keys reached the pane: %s exists", marker)
	}

	// A read-only server: no control, keys dropped, no ack route.
	ro := e.serve()
	if _, status, err := dialTerm(ctx, ro, "h", "?control=1", authed(ro)); err == nil || status != http.StatusForbidden {
		t.Errorf("control on a read-only server: %v %d, want 403", err, status)
	}
	rc, _, err := dialTerm(ctx, ro, "h", "", authed(ro))
	if err != nil {
		t.Fatal(err)
	}
	marker2 := filepath.Join(e.home, "pwned-readonly-server")
	rc.Write(ctx, websocket.MessageBinary, []byte("touch "+marker2+"\r"))
	// The server says it dropped them.
	for {
		typ, b, err := rc.Read(ctx)
		if err != nil {
			t.Fatalf("read-only server: %v before saying it dropped the keys", err)
		}
		if typ == websocket.MessageText && strings.Contains(string(b), `"refused"`) {
			break
		}
	}
	rc.CloseNow()
	e.must("send", "h", "--enter", "echo after-$((6*6))")
	e.waitScreen("h", "after-36")
	if _, err := os.Stat(marker2); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a read-only server passed keys to the pane: %s exists", marker2)
	}
	req, _ := http.NewRequestWithContext(ctx, "POST", ro.base+"/api/v1/attention/1/ack", nil)
	req.Header.Set("Authorization", "Bearer "+ro.token)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
			t.Errorf("ack on a read-only server: %d", resp.StatusCode)
		}
	}
}
