// The terminal view of one pane: xterm.js fed by /term/NAME/ws (see
// term.go for the messages). Reconnects by itself after a dropped
// connection and says so; a new connection starts from the daemon's
// snapshot.
(function () {
  "use strict";
  var body = document.body;
  var name = body.getAttribute("data-name");
  var interactive = body.getAttribute("data-interactive") === "true";
  var keys = JSON.parse(body.getAttribute("data-keys") || "{}");
  var statusEl = document.getElementById("status");
  var modeEl = document.getElementById("mode");
  var controlBtn = document.getElementById("control");
  var keyBar = document.getElementById("keys");
  var compose = document.getElementById("compose");
  var line = document.getElementById("line");
  var narrow = window.matchMedia("(max-width: 600px)").matches;

  var term = new Terminal({ scrollback: 5000, fontSize: narrow ? 12 : 14, cursorBlink: false,
    fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" });
  var fit = new FitAddon.FitAddon();
  term.loadAddon(fit);
  term.open(document.getElementById("term"));
  fit.fit();
  window.musterTerm = term; // for tests and the console

  var ws = null, control = false, exited = false, retry = 0, timer = null;
  var enc = new TextEncoder();

  function status(text, state) {
    statusEl.textContent = text;
    body.setAttribute("data-stream", state);
  }
  function showControls() {
    if (modeEl) { modeEl.textContent = control ? "in control" : (interactive ? "viewing" : "read-only"); }
    if (controlBtn) { controlBtn.textContent = control ? "Release control" : "Take control"; }
    if (keyBar) { keyBar.hidden = !control; }
    if (compose) { compose.hidden = !control; }
    body.setAttribute("data-control", String(control));
    fit.fit();
  }
  // Keys typed while a writer connection opens wait for it (bounded), so
  // that taking control and typing at once loses nothing.
  var pending = [];
  function send(bytes) {
    if (!control) { return false; }
    var b = typeof bytes === "string" ? enc.encode(bytes) : bytes;
    if (!ws || ws.readyState !== WebSocket.OPEN || !live) {
      if (pending.length >= 256) { return false; }
      pending.push(b);
      return true;
    }
    ws.send(b);
    return true;
  }
  var live = false;
  function flush() {
    var q = pending;
    pending = [];
    q.forEach(function (b) { ws.send(b); });
  }

  function connect() {
    timer = null;
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/term/" + encodeURIComponent(name) +
      "/ws?cols=" + term.cols + "&rows=" + term.rows + (control ? "&control=1" : "");
    var sock = new WebSocket(url);
    sock.binaryType = "arraybuffer";
    ws = sock;
    var fresh = true, refusal = "";
    sock.onmessage = function (e) {
      if (sock !== ws) { return; }
      if (typeof e.data !== "string") {
        if (fresh) { term.reset(); fresh = false; }
        term.write(new Uint8Array(e.data));
        body.setAttribute("data-frames", String(Number(body.getAttribute("data-frames") || "0") + 1));
        return;
      }
      var m;
      try { m = JSON.parse(e.data); } catch (err) { return; }
      if (m.type === "hello") { retry = 0; live = true; flush(); status("live", "open"); }
      else if (m.type === "exit") { exited = true; status("exited " + m.code, "exited"); }
      else if (m.type === "refused") { statusEl.textContent = m.message; if (!live) { refusal = m.message; } }
    };
    sock.onclose = function () {
      if (sock !== ws) { return; }
      ws = null;
      live = false;
      if (exited) { return; }
      retry = Math.min(retry + 1, 6);
      // An attach refused (a host that is down, a session gone) stays
      // said while the page tries again.
      if (refusal) { status(refusal + " (trying again)", "refused"); }
      else { status("reconnecting…", "reconnecting"); }
      timer = setTimeout(connect, Math.min(250 * Math.pow(2, retry - 1), 5000));
    };
  }
  function reconnect() {
    if (timer) { clearTimeout(timer); timer = null; }
    var old = ws;
    ws = null;
    live = false;
    pending = [];
    if (old) { old.close(); }
    status("connecting…", "connecting");
    exited = false;
    connect();
  }

  term.onData(function (d) { send(d); });
  term.onBinary(function (d) {
    var b = new Uint8Array(d.length);
    for (var i = 0; i < d.length; i++) { b[i] = d.charCodeAt(i) & 255; }
    send(b);
  });
  term.onResize(function (size) {
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ type: "resize", cols: size.cols, rows: size.rows }));
    }
  });
  window.addEventListener("resize", function () { fit.fit(); });
  if (window.visualViewport) {
    // A phone's keyboard shrinks the visual viewport: keep the compose
    // field above it.
    window.visualViewport.addEventListener("resize", function () {
      body.style.height = window.visualViewport.height + "px";
      fit.fit();
    });
  }

  if (controlBtn) {
    controlBtn.addEventListener("click", function () {
      control = !control;
      showControls();
      reconnect();
      if (control) { term.focus(); }
    });
  }
  if (keyBar) {
    keyBar.addEventListener("click", function (e) {
      var k = e.target.getAttribute && e.target.getAttribute("data-key");
      if (!k || !keys[k]) { return; }
      var b = keys[k];
      // Arrows in application cursor mode, as a terminal would send them.
      if (term.modes.applicationCursorKeysMode && /^\x1b\[[ABCD]$/.test(b)) { b = "\x1bO" + b.charAt(2); }
      send(b);
    });
  }
  if (compose) {
    compose.addEventListener("submit", function (e) {
      e.preventDefault();
      // The line goes as one write and Enter as another: an agent reads
      // a line with its Enter in one read as a paste, not a submit.
      if (send(line.value)) {
        setTimeout(function () { send("\r"); }, 40);
        line.value = "";
      }
    });
  }

  // Touch scrolling through the scrollback (xterm.js leaves it to the
  // browser, which does not scroll its canvas on every phone).
  var touchY = null, acc = 0;
  var el = document.getElementById("term");
  el.addEventListener("touchstart", function (e) { if (e.touches.length === 1) { touchY = e.touches[0].clientY; acc = 0; } }, { passive: true });
  el.addEventListener("touchmove", function (e) {
    if (touchY === null || e.touches.length !== 1) { return; }
    var y = e.touches[0].clientY, rowPx = el.clientHeight / term.rows;
    acc += touchY - y;
    touchY = y;
    var lines = Math.trunc(acc / rowPx);
    if (lines) { term.scrollLines(lines); acc -= lines * rowPx; }
    e.preventDefault();
  }, { passive: false });
  el.addEventListener("touchend", function () { touchY = null; });

  showControls();
  connect();
})();
