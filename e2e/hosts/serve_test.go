package hosts_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/testing/poll"
)

// webServer is a running `muster serve` of an env.
type webServer struct {
	t     *testing.T
	host  string // HOST:PORT
	token string
}

// serve starts `muster serve` with args and reads the URL it prints.
func (e *env) serve(args ...string) *webServer {
	e.t.Helper()
	cmd := exec.Command(musterBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = e.vars
	stderr, err := cmd.StderrPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() {
		e.t.Fatal("serve printed nothing")
	}
	first := lines.Text()
	go io.Copy(io.Discard, stderr)
	i := strings.Index(first, "http://")
	if i < 0 {
		e.t.Fatalf("serve printed %q", first)
	}
	raw, _, _ := strings.Cut(first[i:], " ")
	u, err := url.Parse(raw)
	if err != nil {
		e.t.Fatal(err)
	}
	return &webServer{t: e.t, host: u.Host, token: u.Query().Get("token")}
}

// headers are a page of the server's own, with its token.
func (s *webServer) headers() http.Header {
	return http.Header{"Authorization": {"Bearer " + s.token}, "Origin": {"http://" + s.host}}
}

// liveEvent is what the tests read of the Live page's events.
type liveEvent struct {
	Running  bool `json:"running"`
	Sessions []struct {
		Name  string `json:"name"`
		Host  string `json:"host"`
		State string `json:"state"`
		Down  string `json:"down"`
	} `json:"sessions"`
	Hosts []struct {
		Name  string `json:"name"`
		State string `json:"state"`
		Up    bool   `json:"up"`
		Note  string `json:"note"`
	} `json:"hosts"`
	Items []struct {
		ID      int64  `json:"id"`
		Session string `json:"session"`
		Host    string `json:"host"`
		Running bool   `json:"running"`
		Dialog  *struct {
			Digest  string `json:"digest"`
			Options []struct {
				Label string `json:"label"`
			} `json:"options"`
		} `json:"dialog"`
	} `json:"items"`
}

// row is the session named name, if listed.
func (ev liveEvent) row(name string) (host, down string, ok bool) {
	for _, s := range ev.Sessions {
		if s.Name == name {
			return s.Host, s.Down, true
		}
	}
	return "", "", false
}

func (ev liveEvent) hostState(name string) (state, note string) {
	for _, h := range ev.Hosts {
		if h.Name == name {
			return h.State, h.Note
		}
	}
	return "", ""
}

// events opens the Live page's event stream, as an open page holds it,
// and returns its events as they come; the stream ends with ctx.
func (s *webServer) events(ctx context.Context) <-chan liveEvent {
	s.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+s.host+"/live/events", nil)
	req.Header = s.headers()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("GET /live/events: %s", resp.Status)
	}
	ch := make(chan liveEvent, 64)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
				var ev liveEvent
				if json.Unmarshal([]byte(data), &ev) == nil {
					select {
					case ch <- ev:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	return ch
}

// waitEvent reads events until one satisfies ok, and returns it.
func waitEvent(t *testing.T, ch <-chan liveEvent, within time.Duration, what string, ok func(liveEvent) bool) liveEvent {
	t.Helper()
	deadline := time.After(within)
	var last liveEvent
	for {
		select {
		case ev, open := <-ch:
			if !open {
				t.Fatalf("the event stream ended before %s; last event: %+v", what, last)
			}
			if ok(ev) {
				return ev
			}
			last = ev
		case <-deadline:
			t.Fatalf("no event with %s within %v; last event: %+v", what, within, last)
		}
	}
}

// term opens the terminal WebSocket of name (HOST:NAME).
func (s *webServer) term(ctx context.Context, name, query string) (*websocket.Conn, int, error) {
	u := "ws://" + s.host + "/term/" + url.PathEscape(name) + "/ws?cols=100&rows=30" + query
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: s.headers()})
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	return c, status, err
}

// termMsg is a text message of the terminal WebSocket.
type termMsg struct {
	Type     string `json:"type"`
	Message  string `json:"message"`
	ReadOnly bool   `json:"read_only"`
}

// readTerm reads the terminal's messages until ok says enough of them
// came: the screen bytes so far, and each text message.
func readTerm(t *testing.T, ctx context.Context, c *websocket.Conn, what string, ok func(screen string, msgs []termMsg) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var screen strings.Builder
	var msgs []termMsg
	for !ok(screen.String(), msgs) {
		typ, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("the terminal ended before %s: %v\nscreen: %q\nmessages: %+v", what, err, screen.String(), msgs)
		}
		if typ == websocket.MessageBinary {
			screen.Write(b)
			continue
		}
		var m termMsg
		json.Unmarshal(b, &m)
		msgs = append(msgs, m)
	}
}

func said(msgs []termMsg, typ, text string) bool {
	for _, m := range msgs {
		if m.Type == typ && strings.Contains(m.Message, text) {
			return true
		}
	}
	return false
}

// TestServeShowsHosts drives `muster serve` against a real host over
// sshd: its Live page lists h1's session beside this machine's, with its
// host; the terminal WebSocket of h1:x paints the host pane's screen and,
// on an --interactive server that took control, types into it (seen by
// `muster capture h1:x`), while a read-only server refuses control and
// drops keys; an unknown host is said in one line. The drawer holds h1's
// approval item with the dialog on its screen: a stale click is refused
// and sends nothing, a click on the dialog shown sends the option's key
// to h1's pane, and Acknowledge resolves it there. With h1's sshd stopped, the page says h1 is unreachable
// and dims its rows, a terminal on it is refused with the reason, and a
// page opened then lists this machine's session in its first event.
func TestServeShowsHosts(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	e.must("new", "--name", "here", "-d", "--cmd", "cat")
	e.must("new", "--host", "h1", "--name", "x", "-d", "--cmd", "cat")
	// ask plays Claude Code at a permission dialog: the dialog on its
	// screen, its hooks run by the loop behind cat.
	dialog := `printf ' Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel\n'; `
	e.must("new", "--host", "h1", "--name", "ask", "-d", "--cmd", dialog+e.hookLoop(e.spool("ask"))+" & exec cat", "claude")
	e.must("send", "h1:x", "painted-before", "--enter")
	poll.Wait(t, 20*time.Second, func() bool { return strings.Count(e.run("capture", "h1:x").stdout, "painted-before") == 2 },
		func() string { return "h1:x never echoed: " + e.run("capture", "h1:x").stdout })

	web := e.serve("--interactive")
	ctx, cancel := context.WithCancel(t.Context())
	page := web.events(ctx)
	waitEvent(t, page, 60*time.Second, "h1:x listed with its host beside here", func(ev liveEvent) bool {
		h, down, ok := ev.row("h1:x")
		_, _, here := ev.row("here")
		st, _ := ev.hostState("h1")
		return ok && h == "h1" && down == "" && here && st == host.Connected
	})

	// A read-only view of the host's pane: hello, then its screen.
	c, status, err := web.term(ctx, "h1:x", "")
	if err != nil {
		t.Fatalf("terminal of h1:x: %d %v", status, err)
	}
	readTerm(t, ctx, c, "h1:x's screen", func(screen string, msgs []termMsg) bool {
		return len(msgs) > 0 && msgs[0].Type == "hello" && msgs[0].ReadOnly && strings.Contains(screen, "painted-before")
	})
	c.CloseNow()

	// Control on an --interactive server: keys reach the host's pane.
	c, status, err = web.term(ctx, "h1:x", "&control=1")
	if err != nil {
		t.Fatalf("terminal of h1:x with control: %d %v", status, err)
	}
	readTerm(t, ctx, c, "hello", func(_ string, msgs []termMsg) bool {
		return len(msgs) > 0 && msgs[0].Type == "hello" && !msgs[0].ReadOnly
	})
	if err := c.Write(ctx, websocket.MessageBinary, []byte("typed-from-the-page\r")); err != nil {
		t.Fatal(err)
	}
	poll.Wait(t, 20*time.Second, func() bool { return strings.Count(e.run("capture", "h1:x").stdout, "typed-from-the-page") == 2 },
		func() string { return "the keys never reached h1:x: " + e.run("capture", "h1:x").stdout })
	readTerm(t, ctx, c, "the echo, painted", func(screen string, _ []termMsg) bool { return strings.Count(screen, "typed-from-the-page") >= 2 })
	c.CloseNow()

	// A read-only server: no control, and keys are dropped.
	ro := e.serve()
	if _, status, err := ro.term(ctx, "h1:x", "&control=1"); err == nil || status != http.StatusForbidden {
		t.Fatalf("control on a read-only server: status %d, err %v", status, err)
	}
	c, status, err = ro.term(ctx, "h1:x", "")
	if err != nil {
		t.Fatalf("read-only terminal of h1:x: %d %v", status, err)
	}
	if err := c.Write(ctx, websocket.MessageBinary, []byte("never-typed\r")); err != nil {
		t.Fatal(err)
	}
	readTerm(t, ctx, c, "the refusal of keys", func(_ string, msgs []termMsg) bool { return said(msgs, "refused", "read-only view") })
	c.CloseNow()
	if out := e.must("capture", "h1:x"); strings.Contains(out, "never-typed") {
		t.Fatalf("keys of a read-only view reached h1:x:\n%s", out)
	}

	// A host that is not in config.toml: one line.
	c, status, err = web.term(ctx, "nohost:x", "")
	if err != nil {
		t.Fatalf("terminal of nohost:x: %d %v", status, err)
	}
	readTerm(t, ctx, c, "the refusal", func(_ string, msgs []termMsg) bool { return said(msgs, "refused", `no host "nohost" in config.toml`) })
	c.CloseNow()

	// The drawer: h1's approval item, its dialog read off h1's screen.
	e.hook("ask", "UserPromptSubmit", `,"prompt":"run the tests"`)
	e.hook("ask", "PermissionRequest", `,"tool_name":"Bash","tool_input":{"command":"make test"}`)
	ev := waitEvent(t, page, 60*time.Second, "h1:ask's item with its dialog", func(ev liveEvent) bool {
		return len(ev.Items) == 1 && ev.Items[0].Dialog != nil
	})
	it := ev.Items[0]
	if it.Session != "h1:ask" || it.Host != "h1" || !it.Running || len(it.Dialog.Options) != 2 || it.Dialog.Options[1].Label != "No" {
		t.Fatalf("the drawer's item: %+v %+v", it, it.Dialog)
	}
	answer := func(digest string) (int, map[string]string) {
		body := fmt.Sprintf(`{"option":1,"dialog":%q,"session":%q}`, digest, it.Session)
		req, _ := http.NewRequestWithContext(ctx, "POST", fmt.Sprintf("http://%s/api/v1/attention/%d/answer", web.host, it.ID), strings.NewReader(body))
		req.Header = web.headers()
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]string
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	lastLine := func() string {
		lines := strings.Split(strings.TrimRight(e.run("capture", "h1:ask").stdout, "\n "), "\n")
		return strings.TrimSpace(lines[len(lines)-1])
	}
	if code, m := answer("notthedialogshown"); code != http.StatusConflict || !strings.Contains(m["error"], "dialog changed") || !strings.Contains(m["screen"], "Do you want to proceed?") {
		t.Fatalf("a stale click: %d %v", code, m)
	}
	if l := lastLine(); l != "Esc to cancel" {
		t.Fatalf("a stale click typed into h1:ask: last line %q", l)
	}
	if code, m := answer(it.Dialog.Digest); code != http.StatusOK || m["sent"] != "No" {
		t.Fatalf("the click on No: %d %v", code, m)
	}
	poll.Wait(t, 20*time.Second, func() bool { return lastLine() == "2" },
		func() string { return "No's key (2) never reached h1:ask: " + e.run("capture", "h1:ask").stdout })
	// The key answered the dialog, which resolved the item on h1 (the
	// keystroke is evidence there). The next request is acknowledged
	// from the page: resolved on h1, gone from the drawer.
	waitEvent(t, page, 30*time.Second, "the drawer empty after the answer", func(ev liveEvent) bool { return len(ev.Items) == 0 })
	e.hook("ask", "PermissionRequest", `,"tool_name":"Bash","tool_input":{"command":"make deploy"}`)
	ev = waitEvent(t, page, 60*time.Second, "h1:ask's next item", func(ev liveEvent) bool { return len(ev.Items) == 1 })
	it = ev.Items[0]
	req, _ := http.NewRequestWithContext(ctx, "POST", fmt.Sprintf("http://%s/api/v1/attention/%d/ack", web.host, it.ID), nil)
	req.Header = web.headers()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var acked struct {
		Acknowledged []int64 `json:"acknowledged"`
		Already      []int64 `json:"already"`
	}
	json.NewDecoder(resp.Body).Decode(&acked)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(acked.Acknowledged) != 1 || acked.Acknowledged[0] != it.ID {
		t.Fatalf("ack of h1:ask's item %d: %s %+v", it.ID, resp.Status, acked)
	}
	waitEvent(t, page, 30*time.Second, "the drawer empty after the ack", func(ev liveEvent) bool { return len(ev.Items) == 0 })
	if code, m := answer("anydialog"); code != http.StatusConflict || !strings.Contains(m["error"], "no longer open") {
		t.Fatalf("a click on the acknowledged item: %d %v", code, m)
	}

	// h1 goes away: the open page says so and keeps its rows, dimmed.
	srv.stop()
	waitEvent(t, page, 60*time.Second, "h1 unreachable, its rows dimmed", func(ev liveEvent) bool {
		st, note := ev.hostState("h1")
		_, down, ok := ev.row("h1:x")
		_, _, here := ev.row("here")
		return st == host.Unreachable && note != "" && ok && strings.HasPrefix(down, "h1 unreachable") && here
	})
	c, status, err = web.term(ctx, "h1:x", "")
	if err != nil {
		t.Fatalf("terminal of h1:x while h1 is down: %d %v", status, err)
	}
	readTerm(t, ctx, c, "the refusal", func(_ string, msgs []termMsg) bool { return said(msgs, "refused", "host h1: unreachable") })
	c.CloseNow()
	cancel()

	// A page opened while h1 is down: this machine's session comes in
	// the first event (which waits for this machine's daemon alone), h1
	// with its last listing once its link failed.
	fresh := ro.events(t.Context())
	first := waitEvent(t, fresh, 30*time.Second, "the first event", func(liveEvent) bool { return true })
	if _, _, here := first.row("here"); !first.Running || !here {
		t.Fatalf("the first event of a page opened while h1 is down: %+v", first)
	}
	waitEvent(t, fresh, 60*time.Second, "h1 unreachable with its last listing", func(ev liveEvent) bool {
		st, _ := ev.hostState("h1")
		_, down, ok := ev.row("h1:x")
		return st == host.Unreachable && ok && down != ""
	})
}
