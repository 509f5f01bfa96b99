// Command webbench measures `muster serve`'s terminal views against
// `muster attach` in one run on one machine (issue 26):
//
//   - echo: keystroke-to-echo into `cat` through the page (headless
//     Chromium on loopback; from the keydown event to the display of the
//     frame that carried the echo, both read from a CDP trace, so on the
//     browser's trace clock) and through `muster attach` in a PTY (from
//     the write of the key to its echo read back), alternating rounds.
//   - steps: where the page's time goes, key by key (keydown, xterm.js
//     onData, WebSocket send, echo message, parsed, rendered, next frame).
//   - views: N busy panes, each with one terminal view (a WebSocket client
//     reading what the page reads: /term/NAME/ws with the page's cookie
//     and Origin) or one `muster attach` client in a PTY; CPU and memory
//     of the daemon, of serve and of the clients over a window.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
	"github.com/creack/pty"

	"github.com/musterhq/muster/internal/procfs"
)

var (
	muster      = flag.String("muster", "muster", "muster binary")
	chromium    = flag.String("chromium", "/usr/bin/chromium", "headless Chromium")
	keys        = flag.Int("keys", 200, "keystrokes timed per kind")
	rounds      = flag.Int("rounds", 4, "alternating rounds of the echo test")
	views       = flag.Int("views", 20, "busy panes, each with one view or one attached client")
	window      = flag.Duration("window", 20*time.Second, "how long CPU is measured")
	phases      = flag.String("phases", "echo,views", "which measurements to run")
	perServe    = flag.Int("per-serve", 16, "terminal views one muster serve holds (its maxTerms)")
	chromeFlags = flag.String("chromium-flags", "", "extra Chromium switches, comma-separated (name or name=value)")
)

func phase(name string) bool { return strings.Contains(","+*phases+",", ","+name+",") }

func main() {
	flag.Parse()
	home, _ := os.MkdirTemp("/tmp", "wb")
	defer os.RemoveAll(home)
	os.Setenv("MUSTER_HOME", home)
	os.Setenv("TMUX", "")
	defer exec.Command(*muster, "daemon", "stop", "--force").Run()
	fmt.Printf("webbench: %s, %d CPUs visible\n", run("--version"), nprocs())
	if phase("echo") {
		echoPhase()
	}
	if phase("steps") {
		stepsPhase()
	}
	if phase("views") {
		viewsPhase()
	}
}

func nprocs() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return bytes.Count(b, []byte("processor\t:"))
}

func run(args ...string) string {
	out, err := exec.Command(*muster, args...).Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "webbench: muster %v: %v\n", args, err)
		os.Exit(1)
	}
	return strings.TrimSpace(string(out))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "webbench:", err)
		os.Exit(1)
	}
}

// serve is a running `muster serve --interactive`.
type serve struct {
	cmd   *exec.Cmd
	base  string
	token string
}

func startServe() *serve {
	cmd := exec.Command(*muster, "serve", "--interactive", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	must(err)
	must(cmd.Start())
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() {
		must(fmt.Errorf("serve printed nothing"))
	}
	go io.Copy(io.Discard, stderr)
	line := sc.Text()
	i := strings.Index(line, "http://")
	raw, _, _ := strings.Cut(line[i:], " ")
	u, err := url.Parse(raw)
	must(err)
	return &serve{cmd: cmd, base: "http://" + u.Host, token: u.Query().Get("token")}
}

func (s *serve) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	s.cmd.Wait()
}

// ---- echo ----

// pageProbe marks, in the trace, the moment xterm.js rendered each key's
// echo (performance.mark "echo-rendered"), and counts the echoes rendered
// so that the benchmark types the next key once the last one is on screen.
// It also keeps the time from the key event to the echo parsed, on the
// page's clock.
const pageProbe = `(function(){
  var t = window.musterTerm; window.__done = 0; window.__parsed = []; var pending = null;
  function lineLen(){ var b = t.buffer.active; var l = b.getLine(b.cursorY + b.baseY); return l ? l.translateToString(true).length : 0; }
  document.addEventListener("keydown", function(e){ if (e.key.length === 1) { pending = {t0: e.timeStamp, len: lineLen(), parsed: false}; } }, true);
  t.onWriteParsed(function(){ if (pending && !pending.parsed && lineLen() > pending.len) { pending.parsed = true; window.__parsed.push(performance.now() - pending.t0); } });
  t.onRender(function(){
    if (!pending || !pending.parsed) { return; }
    pending = null;
    performance.mark("echo-rendered");
    setTimeout(function(){ window.__done++; }, 40);
  });
  return true;
})()`

func echoPhase() {
	// One pane each: an attach at its own size would resize the page's.
	run("new", "--name", "lat", "--detach", "--cmd", "cat")
	run("new", "--name", "lata", "--detach", "--cmd", "cat")
	run("new", "--name", "latw", "--detach", "--cmd", "cat")
	srv := startServe()
	defer srv.stop()
	ctx, stop := browser()
	defer stop()
	do(ctx, chromedp.Navigate(srv.base+"/?token="+srv.token), chromedp.Navigate(srv.base+"/term/lat"))
	waitJS(ctx, `document.body.getAttribute("data-stream")==="open"`)
	do(ctx, chromedp.Click(chromedp.CSS("#control")))
	waitJS(ctx, `document.body.getAttribute("data-control")==="true" && document.body.getAttribute("data-stream")==="open"`)
	do(ctx, chromedp.Focus(chromedp.CSS(".xterm-helper-textarea")))
	time.Sleep(500 * time.Millisecond)
	evalJS[bool](ctx, pageProbe)

	var page, parsed, attach, wsc []time.Duration
	per := max(*keys / *rounds, 1)
	tr := startTrace(ctx)
	for range *rounds {
		parsed = append(parsed, pageEcho(ctx, per)...)
		attach = append(attach, attachEcho("lata", per)...)
		wsc = append(wsc, wsEcho(srv, "latw", per)...)
	}
	drawn, page, frame := echoPresented(tr.stop(ctx))
	run("kill", "lat")
	run("kill", "lata")
	run("kill", "latw")
	fmt.Printf("keystroke-to-echo into cat, %d keys each, %d alternating rounds:\n", len(attach), *rounds)
	show := func(name string, d []time.Duration) {
		slices.Sort(d)
		fmt.Printf("  %-34s p50 %7.2f ms  p90 %7.2f ms  p99 %7.2f ms\n", name, ms(pct(d, 50)), ms(pct(d, 90)), ms(pct(d, 99)))
	}
	show("muster attach (PTY)", attach)
	show("WebSocket client, no browser", wsc)
	show("page: key event to echo parsed", parsed)
	show("page: key event to echo drawn", drawn)
	show("page: key event to echo displayed", page)
	fmt.Printf("  (of %d page keys, %d drawn and %d displayed found in the trace; the browser's frame interval %.2f ms)\n", len(parsed), len(drawn), len(page), ms(frame))
	fmt.Printf("  page displayed / attach p50: %.1fx; p50 difference %+.2f ms (goal ≤ +5 ms)\n",
		float64(pct(page, 50))/float64(pct(attach, 50)), ms(pct(page, 50)-pct(attach, 50)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, len(d)*p/100)]
}

// pageEcho types keys into the page one at a time, each once the last
// one's echo was rendered and a frame or two later, at a random phase of
// the browser's frames as a typist's keys are (a key sent right after a
// frame would always wait the longest for the next), and returns the
// page's key-to-parsed times.
func pageEcho(ctx context.Context, n int) (parsed []time.Duration) {
	start := evalJS[int](ctx, `window.__done`)
	for i := range n {
		// A new line before the terminal's width: the probe reads the
		// cursor's line.
		if i%60 == 0 {
			key(ctx, '\r')
			time.Sleep(50 * time.Millisecond)
			start = evalJS[int](ctx, `window.__done`)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(17 * time.Millisecond))))
		key(ctx, rune('a'+i%26))
		deadline := time.Now().Add(5 * time.Second)
		for evalJS[int](ctx, `window.__done`) <= start {
			if time.Now().After(deadline) {
				must(fmt.Errorf("no echo rendered within 5 s: %s", evalJS[string](ctx, `JSON.stringify({stream: document.body.getAttribute("data-stream"), control: document.body.getAttribute("data-control"), active: document.activeElement && document.activeElement.className, line: (function(){var b=window.musterTerm.buffer.active;var l=b.getLine(b.cursorY+b.baseY);return l?l.translateToString(true):""})()})`)))
			}
			time.Sleep(time.Millisecond)
		}
		start++
	}
	var got []float64
	must(json.Unmarshal([]byte(evalJS[string](ctx, `JSON.stringify(window.__parsed.splice(0))`)), &got))
	for _, v := range got {
		parsed = append(parsed, time.Duration(v*float64(time.Millisecond)))
	}
	return parsed
}

// echoPresented reads, from the trace, each key's time from its keydown
// event (EventDispatch on the page's main thread) to the frame that
// carried its echo: the main thread's first Commit after the
// "echo-rendered" mark, then that frame's DrawFrame on the page's
// compositor (drawn), then its display (Display::FrameDisplayed of the
// display compositor, or the presentation feedback the page's compositor
// got, the end of SubmitCompositorFrameToPresentationCompositorFrame;
// Chromium leaves some frames without either, so displayed may be
// shorter). It also returns the interval of the browser's begin-frames.
func echoPresented(evs []traceEvent) (drawn, displayed []time.Duration, frame time.Duration) {
	keyTs, markTs, commitSeq, drawTs := -1.0, -1.0, -1.0, -1.0
	since := func(ts float64) time.Duration { return time.Duration((ts - keyTs) * float64(time.Microsecond)) }
	for _, e := range evs {
		switch {
		case e.Name == "ExternalBeginFrameSource::OnBeginFrame" && frame == 0:
			if a, _ := e.Args["begin_frame_args"].(map[string]any); a != nil {
				if d, ok := a["interval_delta_us"].(float64); ok {
					frame = time.Duration(d * float64(time.Microsecond))
				}
			}
		case e.Name == "EventDispatch":
			if d, _ := e.Args["data"].(map[string]any); d != nil && d["type"] == "keydown" {
				keyTs, markTs, commitSeq, drawTs = e.Ts, -1, -1, -1
			}
		case e.Name == "echo-rendered" && keyTs >= 0:
			markTs = e.Ts
		case e.Name == "Commit" && e.Ph == "X" && markTs >= 0 && commitSeq < 0:
			if seq, ok := e.Args["frameSeqId"].(float64); ok {
				commitSeq = seq
			}
		case e.Name == "DrawFrame" && commitSeq >= 0 && drawTs < 0:
			if seq, _ := e.Args["frameSeqId"].(float64); seq >= commitSeq {
				drawTs = e.Ts
				drawn = append(drawn, since(drawTs))
			}
		case drawTs >= 0 && (e.Name == "Display::FrameDisplayed" || e.Name == "SubmitCompositorFrameToPresentationCompositorFrame" && e.Ph == "e"):
			displayed = append(displayed, since(e.Ts))
			keyTs, markTs, commitSeq, drawTs = -1, -1, -1, -1
		}
	}
	return drawn, displayed, frame
}

// key presses r as a keyboard does: one keyDown carrying the text, then
// keyUp.
func key(ctx context.Context, r rune) {
	do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		k := string(r)
		down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Text: k, UnmodifiedText: k, Key: k}
		if r == '\r' {
			down.Key, down.Code, down.WindowsVirtualKeyCode = "Enter", "Enter", 13
		}
		if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, down); err != nil {
			return err
		}
		up := down
		up.Type, up.Text, up.UnmodifiedText = input.DispatchKeyEventTypeKeyUp, "", ""
		_, err := cdp.Call(ctx, t, input.DispatchKeyEvent, up)
		return err
	}))
}

// wsEcho types keys into cat through serve's WebSocket, as the page
// sends them, without a browser: the server's and the daemon's share.
func wsEcho(s *serve, name string, n int) []time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := dialWS(ctx, s, name, "&control=1")
	defer c.CloseNow()
	msgs := make(chan []byte, 1024)
	go func() {
		for {
			typ, b, err := c.Read(ctx)
			if err != nil {
				close(msgs)
				return
			}
			if typ == websocket.MessageBinary {
				msgs <- b
			}
		}
	}()
	for t := time.After(500 * time.Millisecond); ; {
		select {
		case <-msgs:
			continue
		case <-t:
		}
		break
	}
	var lat []time.Duration
	for i := range n {
		if i > 0 && i%60 == 0 {
			must(c.Write(ctx, websocket.MessageBinary, []byte("\r")))
			time.Sleep(50 * time.Millisecond)
			for len(msgs) > 0 {
				<-msgs
			}
		}
		ch := byte('a' + i%26)
		start := time.Now()
		must(c.Write(ctx, websocket.MessageBinary, []byte{ch}))
		for seen := false; !seen; {
			b, ok := <-msgs
			if !ok {
				must(fmt.Errorf("the view's WebSocket closed"))
			}
			seen = bytes.IndexByte(b, ch) >= 0
		}
		lat = append(lat, time.Since(start))
	}
	return lat
}

// attachEcho types keys into cat through `muster attach` in a PTY.
func attachEcho(name string, n int) []time.Duration {
	cmd := exec.Command(*muster, "attach", name)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 200, Rows: 50})
	must(err)
	ch := make(chan []byte, 1024)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			k, err := f.Read(buf)
			if err != nil {
				close(ch)
				return
			}
			ch <- bytes.Clone(buf[:k])
		}
	}()
	drain := func(d time.Duration) {
		for t := time.After(d); ; {
			select {
			case <-ch:
			case <-t:
				return
			}
		}
	}
	drain(500 * time.Millisecond)
	var lat []time.Duration
	for i := range n {
		if i > 0 && i%60 == 0 {
			f.Write([]byte("\r"))
			drain(50 * time.Millisecond)
		}
		c := byte('a' + i%26)
		start := time.Now()
		f.Write([]byte{c})
		for seen := false; !seen; {
			b, ok := <-ch
			if !ok {
				must(fmt.Errorf("muster attach ended"))
			}
			seen = bytes.IndexByte(b, c) >= 0
		}
		lat = append(lat, time.Since(start))
	}
	f.Write([]byte{0x1c}) // detach
	cmd.Process.Kill()
	cmd.Wait()
	f.Close()
	return lat
}

func browser() (context.Context, func()) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(*chromium), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true))
	for _, f := range strings.Split(*chromeFlags, ",") {
		if f == "" {
			continue
		}
		name, val, ok := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if !ok {
			opts = append(opts, chromedp.Flag(name, true))
		} else {
			opts = append(opts, chromedp.Flag(name, val))
		}
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	must(chromedp.Do(ctx))
	return ctx, func() { cancel(); cancelAlloc() }
}

func do(ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	must(chromedp.Do(ctx, actions...))
}

func evalJS[T any](ctx context.Context, expr string) T {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	must(err)
	return v
}

func waitJS(ctx context.Context, expr string) {
	deadline := time.Now().Add(30 * time.Second)
	for !evalJS[bool](ctx, expr) {
		if time.Now().After(deadline) {
			must(fmt.Errorf("gave up waiting for %s", expr))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ---- views ----

// busyCmd writes about 50 lines of 80 columns every 100 ms, as an agent
// streaming a long tool output does.
const busyCmd = `sh -c 'while :; do i=0; while [ $i -lt 50 ]; do echo "busy line $i of agent output, eighty columns or so wide, with words and more words"; i=$((i+1)); done; sleep 0.1; done'`

type usage struct {
	pids []int
	cpu0 int64
	t0   time.Time
}

func startUsage(pids ...int) *usage {
	u := &usage{pids: pids, t0: time.Now()}
	u.cpu0 = ticks(pids)
	return u
}

func ticks(pids []int) int64 {
	var n int64
	for _, p := range pids {
		st, _ := procfs.FS{}.Stat(p)
		n += int64(st.UTime + st.STime)
	}
	return n
}

func rssMiB(pids []int) float64 {
	var n int64
	for _, p := range pids {
		st, _ := procfs.FS{}.Stat(p)
		n += st.RSSPages * int64(os.Getpagesize())
	}
	return float64(n) / (1 << 20)
}

// percent is the CPU the pids used since start, in % of one core (100
// clock ticks a second).
func (u *usage) percent() float64 {
	return float64(ticks(u.pids)-u.cpu0) / time.Since(u.t0).Seconds()
}

func daemonPID() int {
	var st struct{ PID int }
	json.Unmarshal([]byte(run("daemon", "status", "--json")), &st)
	return st.PID
}

func viewsPhase() {
	run("daemon", "stop", "--force")
	run("ls")
	var names []string
	for i := range *views {
		name := fmt.Sprintf("busy%02d", i)
		run("new", "--name", name, "--detach", "--cmd", busyCmd)
		names = append(names, name)
	}
	d := daemonPID()
	time.Sleep(2 * time.Second)
	fmt.Printf("%d busy panes (about 40 KB/s each):\n", len(names))
	report := func(label string, procs map[string][]int) {
		u := map[string]*usage{}
		for k, p := range procs {
			u[k] = startUsage(p...)
		}
		time.Sleep(*window)
		var parts []string
		for _, k := range []string{"daemon", "serve", "clients"} {
			if p, ok := procs[k]; ok {
				parts = append(parts, fmt.Sprintf("%s %5.1f%% CPU %6.1f MiB", k, u[k].percent(), rssMiB(p)))
			}
		}
		fmt.Printf("  %-24s %s\n", label, strings.Join(parts, " · "))
	}
	report("no client", map[string][]int{"daemon": {d}})

	// N attached clients.
	var clients []*exec.Cmd
	var files []*os.File
	for _, name := range names {
		cmd := exec.Command(*muster, "attach", name)
		cmd.Env = append(os.Environ(), "TERM=xterm-256color")
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
		must(err)
		go io.Copy(io.Discard, f)
		clients, files = append(clients, cmd), append(files, f)
	}
	time.Sleep(2 * time.Second)
	var cpids []int
	for _, c := range clients {
		cpids = append(cpids, c.Process.Pid)
	}
	report(fmt.Sprintf("%d muster attach", len(names)), map[string][]int{"daemon": {d}, "clients": cpids})
	for i, c := range clients {
		files[i].Write([]byte{0x1c})
		c.Process.Kill()
		c.Wait()
		files[i].Close()
	}
	time.Sleep(time.Second)

	// N terminal views, at most perServe per serve.
	var serves []*serve
	for range (len(names) + *perServe - 1) / *perServe {
		serves = append(serves, startServe())
	}
	defer func() {
		for _, s := range serves {
			s.stop()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bytesRead int64
	for i, name := range names {
		s := serves[i / *perServe]
		c := dialWS(ctx, s, name, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, b, err := c.Read(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				bytesRead += int64(len(b))
				mu.Unlock()
			}
		}()
	}
	time.Sleep(2 * time.Second)
	var spids []int
	for _, s := range serves {
		spids = append(spids, s.cmd.Process.Pid)
	}
	mu.Lock()
	b0 := bytesRead
	mu.Unlock()
	report(fmt.Sprintf("%d terminal views (%d serve)", len(names), len(serves)), map[string][]int{"daemon": {d}, "serve": spids})
	mu.Lock()
	fmt.Printf("  (the views read %.0f KB/s together)\n", float64(bytesRead-b0)/1024/window.Seconds())
	mu.Unlock()
	cancel()
	wg.Wait()
	for _, n := range names {
		run("kill", n)
	}
}

// dialWS opens one terminal view's WebSocket as the page does, with the
// cookie of the one-time URL and the page's Origin: read-only (a viewer)
// unless extra is "&control=1".
func dialWS(ctx context.Context, s *serve, name, extra string) *websocket.Conn {
	u := strings.Replace(s.base, "http://", "ws://", 1) + "/term/" + url.PathEscape(name) + "/ws?cols=120&rows=40" + extra
	h := http.Header{}
	h.Set("Origin", s.base)
	h.Set("Cookie", "muster_serve_"+s.base[strings.LastIndex(s.base, ":")+1:]+"="+s.token)
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		status := ""
		if resp != nil {
			status = resp.Status
		}
		must(fmt.Errorf("open the view of %s: %v %s", name, err, status))
	}
	c.SetReadLimit(1 << 20)
	return c
}
