package web_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/chromedp/chromedp/kb"

	"github.com/musterhq/muster/internal/testing/chromium"
	"github.com/musterhq/muster/internal/testing/poll"
)

// browser starts headless Chromium for one test.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin := chromium.Find(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

func do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// value runs an action that answers something.
func value[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// eval evaluates expr in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	return value(t, ctx, chromedp.Evaluate[T](expr))
}

// termTextJS is the text of xterm.js's buffer, scrollback included.
const termTextJS = `(function(){var t=window.musterTerm;if(!t)return "";var b=t.buffer.active,out=[];for(var i=0;i<b.length;i++){var l=b.getLine(i);if(l)out.push(l.translateToString(true));}return out.join("\n");})()`

// waitPage polls expr (a string-valued expression) until cond holds.
func waitPage(t *testing.T, ctx context.Context, what, expr string, cond func(string) bool) string {
	t.Helper()
	var last string
	poll.Wait(t, 30*time.Second, func() bool {
		last = eval[string](t, ctx, expr)
		return cond(last)
	}, func() string { return fmt.Sprintf("%s; last: %q", what, last) })
	return last
}

func waitTerm(t *testing.T, ctx context.Context, want string) string {
	t.Helper()
	return waitPage(t, ctx, "the terminal to show "+want, termTextJS, func(s string) bool { return strings.Contains(s, want) })
}

func waitStream(t *testing.T, ctx context.Context, state string) {
	t.Helper()
	waitPage(t, ctx, "the stream to be "+state, `document.body.getAttribute("data-stream")||""`, func(s string) bool { return s == state })
}

// TestTerminalInBrowser: the one-time URL, the session list (with a
// worktree's branch and its changes, as ls shows them), a terminal,
// taking control and typing a command, its output, a resize reaching the
// pane, and a lost connection the page says it is recovering from and
// recovers from by itself.
func TestTerminalInBrowser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.shell("sh")
	e.must("send", "sh", "--enter", "echo ready-$((40+2))")
	e.waitScreen("sh", "ready-42")
	repo := e.gitRepo()
	e.must("new", "--name", "wt", "--detach", "--dir", repo, "--cmd", "bash --norc --noprofile", "--worktree", "feat")
	srv := e.serve("--interactive")
	px := newProxy(t, srv.url.Host)
	base := "http://" + px.addr()
	ctx := browser(t)

	// The one-time URL sets the cookie and leaves the address bar.
	do(t, ctx, chromedp.Navigate(base+"/?token="+srv.token))
	loc := value(t, ctx, chromedp.Location())
	if strings.Contains(loc, "token") {
		t.Errorf("the address bar kept the token: %s", loc)
	}
	do(t, ctx, chromedp.Navigate(base+"/live"))
	waitPage(t, ctx, "the live list to show sh", `(document.querySelector('[data-name="sh"] .state')||{}).textContent||""`,
		func(s string) bool { return s == "live" })
	branch := `(document.querySelector('[data-name="wt"] .branch')||{}).textContent||""`
	waitPage(t, ctx, "the live list to show wt's branch", branch, func(s string) bool { return s == "⎇ feat" })
	// A change in the tree: the page marks it, as ls does, once the
	// daemon has looked again (every 10 s) and pushed it.
	if err := writeFile(filepath.Join(filepath.Dir(repo), "app.worktrees", "feat", "notes.txt"), []byte("wip\n")); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, "the live list to mark wt's changes", branch, func(s string) bool { return s == "⎇ feat*" })

	do(t, ctx, chromedp.Navigate(base+"/term/sh"))
	waitStream(t, ctx, "open")
	waitTerm(t, ctx, "ready-42") // repainted from the daemon's snapshot

	do(t, ctx, chromedp.Click(chromedp.CSS("#control")))
	waitPage(t, ctx, "control", `document.body.getAttribute("data-control")`, func(s string) bool { return s == "true" })
	waitStream(t, ctx, "open")
	do(t, ctx, chromedp.Focus(chromedp.CSS(".xterm-helper-textarea")), typeKeys("echo typed-$((6*7))\r"))
	waitTerm(t, ctx, "typed-42")
	e.waitScreen("sh", "typed-42")

	// A smaller window: the page fits its terminal, and, in control, the
	// pane takes its size.
	do(t, ctx, chromedp.EmulateViewport(700, 420))
	size := waitPage(t, ctx, "the terminal to shrink", `window.musterTerm.rows+" "+window.musterTerm.cols`, func(s string) bool {
		var r, c int
		fmt.Sscan(s, &r, &c)
		return c > 10 && c < 90 && r < 30
	})
	// The page may fit twice as the viewport settles: ask the pane again
	// until it reports the page's current size.
	var last string
	poll.Wait(t, 30*time.Second, func() bool {
		size = eval[string](t, ctx, `window.musterTerm.rows+" "+window.musterTerm.cols`)
		do(t, ctx, typeKeys("stty size\r"))
		return poll.Until(3*time.Second, func() bool {
			last = eval[string](t, ctx, termTextJS)
			return strings.Contains(last, "\n"+size+" ") || strings.Contains(last, "\n"+size+"\n")
		})
	}, func() string {
		return fmt.Sprintf("the pane to report the page's size %q; last screen:\n%s", size, last)
	})

	// The network goes away: the page says so, and comes back by itself.
	px.setDown(true)
	waitStream(t, ctx, "reconnecting")
	if s := eval[string](t, ctx, `document.getElementById("status").textContent`); s != "reconnecting…" {
		t.Errorf("while the connection is down the page says %q", s)
	}
	e.must("send", "sh", "--enter", "echo while-away-$((1+1))")
	e.waitScreen("sh", "while-away-2")
	px.setDown(false)
	waitStream(t, ctx, "open")
	waitTerm(t, ctx, "while-away-2")
	do(t, ctx, chromedp.Focus(chromedp.CSS(".xterm-helper-textarea")), typeKeys("echo back-$((3*3))\r"))
	waitTerm(t, ctx, "back-9")
}

// TestPhoneLayout: at 390×844 with touch, the terminal fits the width,
// the key bar and the compose field drive the pane, and nothing overflows
// sideways.
func TestPhoneLayout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.shell("ph")
	srv := e.serve("--interactive")
	ctx := browser(t)
	do(t, ctx, chromedp.Emulate(device.IPhone12Pro), chromedp.Navigate(srv.base+"/?token="+srv.token))
	do(t, ctx, chromedp.Navigate(srv.base+"/live"))
	waitPage(t, ctx, "the live list", `(document.querySelector('[data-name="ph"] .state')||{}).textContent||""`, func(s string) bool { return s == "live" })
	noOverflow := `String(document.documentElement.scrollWidth <= window.innerWidth)`
	if got := eval[string](t, ctx, noOverflow); got != "true" {
		t.Errorf("the live page overflows a phone's width")
	}

	do(t, ctx, chromedp.Navigate(srv.base+"/term/ph"))
	waitStream(t, ctx, "open")
	if w := eval[float64](t, ctx, `window.innerWidth`); w != 390 {
		t.Errorf("viewport width %v, want 390", w)
	}
	if got := eval[string](t, ctx, `String(!!document.getElementById("keys").hidden)`); got != "true" {
		t.Errorf("the key bar shows before the user takes control")
	}
	do(t, ctx, chromedp.Click(chromedp.CSS("#control")))
	waitPage(t, ctx, "the key bar", `String(!document.getElementById("keys").hidden && !document.getElementById("compose").hidden)`, func(s string) bool { return s == "true" })
	waitStream(t, ctx, "open")
	for _, k := range []string{"esc", "tab", "btab", "left", "up", "down", "right", "ctrlc", "enter"} {
		if n := eval[int](t, ctx, `document.querySelectorAll('#keys [data-key="`+k+`"]').length`); n != 1 {
			t.Errorf("the key bar has %d %s keys", n, k)
		}
	}
	// The compose field sends a whole line, then Enter.
	do(t, ctx, chromedp.Focus(chromedp.CSS("#line")), typeKeys("echo composed-$((2+3))"), chromedp.Click(chromedp.CSS("#compose button")))
	waitTerm(t, ctx, "composed-5")
	// The key bar: ↑ recalls the line, ⏎ runs it again.
	before := strings.Count(e.waitScreen("ph", "composed-5"), "composed-5")
	do(t, ctx, chromedp.Click(chromedp.CSS(`#keys [data-key="up"]`)), chromedp.Click(chromedp.CSS(`#keys [data-key="enter"]`)))
	poll.Wait(t, 20*time.Second, func() bool {
		s, _ := e.run("capture", "ph")
		return strings.Count(s, "composed-5") > before
	}, func() string { return "↑ then ⏎ from the key bar to run the line again" })
	// Ctrl-C from the bar interrupts.
	do(t, ctx, chromedp.Focus(chromedp.CSS("#line")), typeKeys("sleep 600\n"))
	e.waitScreen("ph", "sleep 600")
	do(t, ctx, chromedp.Click(chromedp.CSS(`#keys [data-key="ctrlc"]`)))
	e.waitScreen("ph", "^C")
	if got := eval[string](t, ctx, noOverflow); got != "true" {
		t.Errorf("the terminal page overflows a phone's width")
	}
	shot := value(t, ctx, chromedp.CaptureScreenshot())
	if dir := t.ArtifactDir(); dir != "" {
		_ = writeFile(dir+"/phone-term.png", shot)
	}
}

// typeKeys types s as a keyboard does: one keyDown carrying the text,
// then keyUp, per key (chromedp.KeyEvent's separate char event reaches
// xterm.js as a second key).
func typeKeys(s string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, r := range s {
			if r == '\n' {
				r = '\r'
			}
			down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Text: string(r), UnmodifiedText: string(r), Key: string(r)}
			if k, ok := kb.Keys[r]; ok {
				down.Key, down.Code, down.WindowsVirtualKeyCode, down.NativeVirtualKeyCode = k.Key, k.Code, k.Windows, k.Native
				if k.Shift {
					down.Modifiers = int64(chromedp.ModifierShift)
				}
			}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, down); err != nil {
				return err
			}
			up := down
			up.Type, up.Text, up.UnmodifiedText = input.DispatchKeyEventTypeKeyUp, "", ""
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, up); err != nil {
				return err
			}
		}
		return nil
	})
}
