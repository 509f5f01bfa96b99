package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// stepsInit runs before the page's own script: it wraps WebSocket so that
// every send and every message of the page's sockets is timestamped.
const stepsInit = `(function(){
  window.__steps = []; window.__cur = null;
  var OrigWS = window.WebSocket, origSend = OrigWS.prototype.send;
  OrigWS.prototype.send = function(d){ if (window.__cur && !window.__cur.send) { window.__cur.send = performance.now(); } return origSend.call(this, d); };
  window.WebSocket = function(u, p){ var s = p === undefined ? new OrigWS(u) : new OrigWS(u, p);
    s.addEventListener("message", function(e){ var c = window.__cur; if (c && c.send && !c.msg && typeof e.data !== "string") { c.msg = performance.now(); } });
    return s; };
  window.WebSocket.prototype = OrigWS.prototype; window.WebSocket.OPEN = OrigWS.OPEN;
})()`

// stepsProbe timestamps each step of one key's round trip in the page.
// The keys go right after the last echo's frame (the worst phase, which
// makes a wait for the next frame show as a whole frame), and the last
// step waits a frame more than the echo's own: read it as a breakdown,
// and the echo phase for the latency.
const stepsProbe = `(function(){
  var t = window.musterTerm;
  document.addEventListener("keydown", function(e){ if (e.key.length === 1) { window.__cur = {ev: e.timeStamp, down: performance.now()}; } }, true);
  t.onData(function(){ var c = window.__cur; if (c && !c.data) { c.data = performance.now(); } });
  t.onWriteParsed(function(){ var c = window.__cur; if (c && c.msg && !c.parsed) { c.parsed = performance.now(); } });
  t.onRender(function(){ var c = window.__cur; if (!c || !c.parsed || c.render) { return; } c.render = performance.now();
    requestAnimationFrame(function(ts){ c.raf = performance.now(); c.rafTs = ts; var ch = new MessageChannel(); ch.port1.onmessage = function(){ c.after = performance.now(); window.__steps.push(c); window.__cur = null; }; ch.port2.postMessage(0); });
  });
  return true;
})()`

var debugSteps = flag.Bool("debug-steps", false, "print the wall-clock times of the last keys' send and echo")

type step struct {
	Ev, Down, Data, Send, Msg, Parsed, Render, Raf, RafTs, After float64
}

func stepsPhase() {
	run("new", "--name", "lats", "--detach", "--cmd", "cat")
	srv := startServe()
	defer srv.stop()
	ctx, stop := browser()
	defer stop()
	do(ctx, chromedp.Navigate(srv.base+"/?token="+srv.token))
	do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: stepsInit})
		return err
	}))
	do(ctx, chromedp.Navigate(srv.base+"/term/lats"))
	waitJS(ctx, `document.body.getAttribute("data-stream")==="open"`)
	do(ctx, chromedp.Click(chromedp.CSS("#control")))
	waitJS(ctx, `document.body.getAttribute("data-control")==="true" && document.body.getAttribute("data-stream")==="open"`)
	do(ctx, chromedp.Focus(chromedp.CSS(".xterm-helper-textarea")))
	time.Sleep(500 * time.Millisecond)
	evalJS[bool](ctx, stepsProbe)
	for i := range *keys {
		if i%60 == 0 {
			key(ctx, '\r')
			time.Sleep(50 * time.Millisecond)
			evalJS[bool](ctx, `(function(){window.__cur=null;return true})()`)
		}
		n := evalJS[int](ctx, `window.__steps.length`)
		key(ctx, rune('a'+i%26))
		deadline := time.Now().Add(5 * time.Second)
		for evalJS[int](ctx, `window.__steps.length`) <= n {
			if time.Now().After(deadline) {
				must(fmt.Errorf("no echo painted within 5 s: %s", evalJS[string](ctx, `JSON.stringify(window.__cur)`)))
			}
			time.Sleep(time.Millisecond)
		}
	}
	run("kill", "lats")
	var got []step
	must(json.Unmarshal([]byte(evalJS[string](ctx, `JSON.stringify(window.__steps)`)), &got))
	fmt.Printf("page steps, %d keys, ms after the previous step (p50 / p90):\n", len(got))
	col := func(name string, f func(s step) float64) {
		var d []float64
		for _, s := range got {
			d = append(d, f(s))
		}
		slices.Sort(d)
		fmt.Printf("  %-40s %7.2f / %7.2f\n", name, d[len(d)/2], d[len(d)*9/10])
	}
	col("key event → keydown handler", func(s step) float64 { return s.Down - s.Ev })
	col("keydown → xterm onData", func(s step) float64 { return s.Data - s.Down })
	col("onData → ws.send", func(s step) float64 { return s.Send - s.Data })
	col("ws.send → echo message", func(s step) float64 { return s.Msg - s.Send })
	col("message → xterm parsed", func(s step) float64 { return s.Parsed - s.Msg })
	col("parsed → xterm rendered", func(s step) float64 { return s.Render - s.Parsed })
	col("rendered → next rAF", func(s step) float64 { return s.Raf - s.Render })
	col("rAF → after the frame", func(s step) float64 { return s.After - s.Raf })
	col("total: key event → after the frame", func(s step) float64 { return s.After - s.Ev })
	if *debugSteps {
		origin := evalJS[float64](ctx, `performance.timeOrigin`)
		for _, s := range got[len(got)-5:] {
			fmt.Printf("  send %s  msg %s\n", time.UnixMicro(int64((origin+s.Send)*1000)).Format("15:04:05.000000"), time.UnixMicro(int64((origin+s.Msg)*1000)).Format("15:04:05.000000"))
		}
	}
}
