package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proccost"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/redact"
	"github.com/musterhq/muster/internal/termtext"
)

// The Live page: the daemon's panes with their state, attention and a
// read-only preview of the screen, kept current by server-sent events
// (GET /live/events). The page works without its script (a snapshot);
// the script only replaces the snapshot with each event, through
// textContent, never markup.

// liveCSP is the Live page's policy: uiCSP plus its one inline script
// (by nonce) and the event stream of this origin.
func liveCSP(nonce string) string {
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-" + nonce + "'; connect-src 'self'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}

// Bounds of a screen preview: the bottom of the screen, where agents
// prompt, clipped to a terminal's width.
const (
	previewLines = 30
	previewCols  = 200
	// liveEventTimeout bounds the daemon calls of one snapshot.
	liveEventTimeout = 3 * time.Second
	// keepAlive is how often an idle event stream sends a comment, so
	// proxies keep it open and a vanished client is noticed.
	keepAlive = 15 * time.Second
)

// liveState is one snapshot of the Live page (and one event's data).
type liveState struct {
	Running  bool          `json:"running"`
	Sessions []liveSession `json:"sessions"`
	// Total is what every sampled pane costs together ("" when none is).
	Total string `json:"total,omitempty"`
	// Items are the open attention items: the drawer (drawer.go).
	Items []liveItem `json:"items"`
	// Interactive: the drawer offers answers and acknowledgements.
	Interactive bool `json:"interactive,omitempty"`
	// ScreensWithheld: the request had no token, so no screen is shown.
	ScreensWithheld bool `json:"screens_withheld,omitempty"`
	// ExternalError says why a supervisor's background agents could not
	// be listed (the panes and the others' agents still are).
	ExternalError string `json:"external_error,omitempty"`
	// Hosts are the other machines (remote.go), in config.toml's order;
	// their sessions follow this machine's in Sessions.
	Hosts []liveHost `json:"hosts,omitempty"`
}

type liveSession struct {
	Name     string `json:"name"`
	Provider string `json:"provider"`
	State    string `json:"state"`
	RunState string `json:"run_state"`
	// Status is the one word for the session, as ls and the dashboard
	// show it (proto.SessionInfo.StatusLabel); the page shows only it.
	Status    string   `json:"status"`
	Activity  string   `json:"activity"`
	Attention int      `json:"attention"`
	Reasons   []string `json:"reasons"`
	CWD       string   `json:"cwd"`
	Title     string   `json:"title"`
	Screen    string   `json:"screen"`
	// Link is the page of the pane's conversation, when its native id is
	// known.
	Link string `json:"link"`
	// Cost is the pane's process tree's memory and CPU ("1.2G · 12%
	// CPU"); Over says it is past its memory ceiling.
	Cost string `json:"cost,omitempty"`
	Over bool   `json:"over,omitempty"`
	// LimitResetsAt is, while the session is limited (stopped at its
	// provider's usage limit), when the agent said the limit resets (RFC
	// 3339); Resets says it as the page does ("resets 15:04"), and
	// Continues that Muster sends the provider's continue then, as
	// `muster ls` says both.
	LimitResetsAt string `json:"limit_resets_at,omitempty"`
	Resets        string `json:"resets,omitempty"`
	Continues     bool   `json:"continues,omitempty"`
	// Branch is the mark of the session's own worktree, as ls and the
	// dashboard show it ("feat* ↑2"); Worktree says it in words.
	Branch   string `json:"branch,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	// External marks an agent a CLI's own supervisor runs, not a pane
	// (external.go): RunBy names the supervisor, Open is the command
	// that opens it in a pane, as `muster ls` advises it.
	External bool   `json:"external,omitempty"`
	RunBy    string `json:"run_by,omitempty"`
	Open     string `json:"open,omitempty"`
	// Host is the machine whose daemon runs the session (Name is then
	// HOST:NAME), "" for this one. Down says, while that host does not
	// answer, since when the row is what it listed last.
	Host string `json:"host,omitempty"`
	Down string `json:"down,omitempty"`
}

// liveSnapshot asks the daemon for its sessions, their attention items
// and, for a request with the token (screens), their screens. The hosts
// are what the hub knows of them, when it follows them: a page is never
// held up by a host.
func (s *Server) liveSnapshot(ctx context.Context, screens bool) liveState {
	var hosts []HostState
	var hostScreens map[string]string
	if s.hub != nil {
		snap := s.hub.snapshot()
		hosts, hostScreens = snap.hosts, snap.screens
	}
	in := liveInput{hosts: hosts, screens: screens}
	if s.o.Live == nil {
		return s.liveState(in)
	}
	ctx, cancel := context.WithTimeout(ctx, liveEventTimeout)
	defer cancel()
	list, err := s.o.Live(ctx)
	if err != nil {
		s.o.Logger.Debug("list live sessions", "err", err)
		return s.liveState(in)
	}
	in.running, in.sessions = true, list
	if s.o.Attention != nil {
		in.items, _ = s.o.Attention(ctx)
	}
	extErr := ""
	if s.ext != nil {
		var rows []proto.SessionInfo
		rows, extErr = s.ext.get(ctx, list)
		in.sessions = append(slices.Clip(list), rows...)
	}
	in.screen = func(name string) string {
		if text, ok := hostScreens[name]; ok || strings.Contains(name, ":") {
			// A host's session: what the hub follows of it, never a
			// call to the host per page.
			return text
		}
		if s.o.Capture == nil {
			return ""
		}
		text, err := s.o.Capture(ctx, name)
		if err != nil {
			return ""
		}
		return previewText(text)
	}
	st := s.liveState(in)
	st.ExternalError = extErr
	return st
}

// liveInput is what one state of the Live page is made of.
type liveInput struct {
	// running: a daemon answers here; sessions and items are its
	// (sessions with the background agents, External rows).
	running  bool
	sessions []proto.SessionInfo
	items    []proto.AttentionItem
	hosts    []HostState
	// screens: the request may see screens, which screen reads (a
	// running pane's preview, by name).
	screens bool
	screen  func(name string) string
}

// liveState builds the Live page's state from this machine's sessions
// and every host's, their attention items (the open ones count and fill
// the drawer) and, with screens, the screen preview of each running pane.
func (s *Server) liveState(in liveInput) liveState {
	st := liveState{Running: in.running, Interactive: s.o.Interactive, ScreensWithheld: !in.screens}
	list, items := in.sessions, in.items
	// hostOf and down are by the session's name (HOST:NAME); order is
	// config.toml's, for the rows.
	hostOf, down, order := map[string]string{}, map[string]string{}, map[string]int{}
	for i, h := range in.hosts {
		lh, note := s.hostView(h)
		st.Hosts = append(st.Hosts, lh)
		order[lh.Name] = i
		for _, si := range h.Sessions {
			hostOf[si.Name] = lh.Name
			if note != "" {
				down[si.Name] = note
			}
		}
		list = append(slices.Clip(list), h.Sessions...)
		items = append(slices.Clip(items), h.Attention...)
	}
	shown := map[string]string{}
	running := map[string]bool{}
	for _, si := range list {
		// A host that does not answer shows what it listed last: no
		// terminal to open, no screen.
		if si.State == "running" && down[si.Name] == "" {
			running[si.Name] = true
			if in.screens && in.screen != nil {
				shown[si.Name] = in.screen(si.Name)
			}
		}
	}
	var rss int64
	var cpu float64
	sampled := false
	reasons := map[string][]string{}
	for _, it := range items {
		if it.Open {
			r := it.Reason
			if it.Message != "" {
				r += ": " + it.Message
			}
			reasons[it.SessionName] = append(reasons[it.SessionName], termtext.Line(r))
		}
	}
	for _, si := range list {
		if si.External != nil {
			ls := externalSession(si)
			if si.NativeSessionID != "" && s.knownProvider(si.Provider) && hostOf[si.Name] == "" {
				ls.Link = sessionLink(si.Provider, si.NativeSessionID)
			}
			ls.Host, ls.Down = hostOf[si.Name], down[si.Name]
			st.Sessions = append(st.Sessions, ls)
			continue
		}
		ls := liveSession{Name: si.Name, Provider: si.Provider, State: si.State, Status: si.StatusLabel(), Activity: si.Activity,
			Attention: si.Attention, Reasons: reasons[si.Name], CWD: si.CWD, Title: termtext.Line(si.Title),
			Host: hostOf[si.Name], Down: down[si.Name]}
		if si.RunState != nil {
			ls.RunState = *si.RunState
		}
		// A host's conversations are in its own history, not this one.
		if si.NativeSessionID != "" && s.knownProvider(si.Provider) && ls.Host == "" {
			ls.Link = sessionLink(si.Provider, si.NativeSessionID)
		}
		ls.Screen = shown[si.Name]
		if si.LimitResetsAt != nil {
			ls.LimitResetsAt = *si.LimitResetsAt
			ls.Resets = s.resetsText(*si.LimitResetsAt)
			ls.Continues = si.ContinueAfterLimit
		}
		if w := si.Worktree; w != nil {
			ls.Branch = termtext.Line(w.BranchMark())
			ls.Worktree = worktreeText(*w)
		}
		if si.RSSBytes != nil {
			ls.Cost = proccost.FormatBytes(*si.RSSBytes)
			ls.Over = si.MemoryCeiling > 0 && *si.RSSBytes > si.MemoryCeiling
			if ls.Over {
				ls.Cost += " (over its " + proccost.FormatBytes(si.MemoryCeiling) + " ceiling)"
			}
			if si.CPUPercent != nil {
				ls.Cost += fmt.Sprintf(" · %.0f%% CPU", *si.CPUPercent)
			}
			// The total is this machine's.
			if ls.Host == "" {
				rss += *si.RSSBytes
				sampled = true
				if si.CPUPercent != nil {
					cpu += *si.CPUPercent
				}
			}
		}
		st.Sessions = append(st.Sessions, ls)
	}
	if sampled {
		st.Total = fmt.Sprintf("agents %s, %.0f%% CPU", proccost.FormatBytes(rss), cpu)
	}
	// The panes first, then the agents Muster does not run, then each
	// host's sessions in config.toml's order; each by name.
	group := func(ls liveSession) int {
		switch {
		case ls.Host != "":
			return 2 + order[ls.Host]
		case ls.External:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(st.Sessions, func(a, b liveSession) int {
		if ga, gb := group(a), group(b); ga != gb {
			return ga - gb
		}
		return strings.Compare(a.Name, b.Name)
	})
	st.Items = drawerItems(items, running, shown, hostOf, down)
	return st
}

// resetsText says when a usage limit resets, in the server's time zone:
// the time of day, with the date when it is not today.
func (s *Server) resetsText(at string) string {
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return "resets " + termtext.Line(at)
	}
	return "resets " + s.clock(t)
}

// worktreeText says in words what a session's worktree mark says.
func worktreeText(w proto.WorktreeInfo) string {
	out := "worktree " + termtext.Line(w.Path) + " on " + termtext.Line(w.Branch)
	switch {
	case !w.Exists:
		// Not inspected yet, or removed under the session.
		return out
	case w.Dirty == 1:
		out += ", 1 changed file"
	case w.Dirty > 1:
		out += fmt.Sprintf(", %d changed files", w.Dirty)
	default:
		out += ", clean"
	}
	switch {
	case w.Ahead == 1:
		out += ", 1 commit since its base"
	case w.Ahead > 1:
		out += fmt.Sprintf(", %d commits since its base", w.Ahead)
	}
	return out
}

// hubState is the Live page's state from what the daemon and the hosts
// pushed; ok is false until the hub knows anything of this machine's
// daemon (whether one answers).
func (s *Server) hubState(withScreens bool) (liveState, bool) {
	snap := s.hub.snapshot()
	if !snap.known {
		return liveState{}, false
	}
	in := liveInput{running: snap.running, hosts: snap.hosts, screens: withScreens,
		screen: func(name string) string { return snap.screens[name] }}
	extErr := ""
	if snap.running {
		in.sessions, in.items = snap.sessions, snap.attention
		if s.ext != nil {
			// The hub lists them again while pages listen (pollExternal).
			var rows []proto.SessionInfo
			rows, extErr, _ = s.ext.last()
			in.sessions = append(slices.Clip(in.sessions), rows...)
		}
	}
	st := s.liveState(in)
	st.ExternalError = extErr
	return st, true
}

// previewText is the bottom of a screen: blank lines at its end dropped,
// at most previewLines lines of at most previewCols characters, control
// characters removed.
func previewText(screen string) string {
	lines := strings.Split(strings.TrimRight(termtext.Strip(screen), "\n "), "\n")
	if len(lines) > previewLines {
		lines = lines[len(lines)-previewLines:]
	}
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		if r := []rune(l); len(r) > previewCols {
			l = string(r[:previewCols])
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

func (s *Server) handleLive(r *http.Request) reply {
	st := s.liveSnapshot(r.Context(), s.screensAllowed(r))
	nonce := newNonce()
	local := 0
	for _, ls := range st.Sessions {
		if ls.Host == "" {
			local++
		}
	}
	return pageReply{status: http.StatusOK, name: "live", csp: liveCSP(nonce),
		data: map[string]any{"Running": st.Running, "Sessions": st.Sessions, "Local": local, "Hosts": st.Hosts, "Total": st.Total, "Nonce": nonce,
			"Items": st.Items, "Interactive": st.Interactive, "ScreensWithheld": st.ScreensWithheld, "ExternalError": st.ExternalError}}
}

func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (s *Server) handleLiveEvents(r *http.Request) reply {
	return eventsReply{}
}

// eventsReply is the Live page's event stream: a "live" event with the
// redacted state whenever it changes. With Options.Watch the state is what
// the daemon pushes (at most one event per minEventGap); without it the
// daemon is asked every LiveInterval. With ?once the stream ends after the
// first event (for scripts and curl).
type eventsReply struct{}

// minEventGap spaces the events of one stream: twenty busy panes push a
// screen each every 100 ms, and a person reads no faster than this.
const minEventGap = 250 * time.Millisecond

func (eventsReply) write(s *Server, w http.ResponseWriter, r *http.Request) {
	once := r.URL.Query().Has("once")
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The page shows the stream open at once, before the first event.
	if rc.Flush() != nil {
		return
	}
	interval := s.o.LiveInterval
	if interval <= 0 {
		interval = time.Second
	}
	var changed <-chan struct{}
	var tick <-chan time.Time
	screens := s.screensAllowed(r)
	state := func() liveState { return s.liveSnapshot(r.Context(), screens) }
	if s.hub != nil {
		ch, cancel := s.hub.subscribe()
		defer cancel()
		changed = ch
		// The first event waits for the daemon's first push, or says no
		// daemon answers once the attempt failed.
		deadline := time.After(liveEventTimeout)
		for known := false; !known; {
			if _, known = s.hubState(screens); known {
				break
			}
			select {
			case <-r.Context().Done():
				return
			case <-ch:
			case <-deadline:
				known = true
			}
		}
		state = func() liveState { st, _ := s.hubState(screens); return st }
	} else {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	keep := time.NewTicker(keepAlive)
	defer keep.Stop()
	var last []byte
	for {
		st, _ := redact.Value(state())
		data, err := json.Marshal(st)
		if err != nil {
			s.o.Logger.Error("encode live event", "err", err)
			return
		}
		if !bytes.Equal(data, last) {
			if !writeEvent(w, rc, fmt.Appendf(nil, "event: live\ndata: %s\n\n", data)) {
				return
			}
			last = data
			keep.Reset(keepAlive)
		}
		if once {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick:
		case <-changed:
			// Coalesce a burst of pushes into one event.
			select {
			case <-r.Context().Done():
				return
			case <-time.After(minEventGap):
			}
		case <-keep.C:
			if !writeEvent(w, rc, []byte(": keep-alive\n\n")) {
				return
			}
		}
	}
}

// writeEvent writes and flushes one message of an event stream; false
// means the client is gone.
func writeEvent(w http.ResponseWriter, rc *http.ResponseController, msg []byte) bool {
	if _, err := w.Write(msg); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// liveScript renders each event into #sessions. It builds elements and
// sets textContent only: nothing from an event is parsed as markup.
const liveScript = `(function () {
  "use strict";
  var body = document.body, box = document.getElementById("sessions"), status = document.getElementById("status"), total = document.getElementById("total"), extnote = document.getElementById("extnote"), hostsBox = document.getElementById("hosts");
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) { e.className = cls; } if (text) { e.textContent = text; } return e; }
  function render(st) {
    var frag = document.createDocumentFragment();
    var local = (st.sessions || []).filter(function (s) { return !s.host; }).length;
    if (!st.running) { frag.appendChild(el("p", "", "No daemon running: start one with muster daemon to see live sessions.")); }
    else if (!local) { frag.appendChild(el("p", "", "The daemon runs no sessions.")); }
    (st.sessions || []).forEach(function (s) {
      var card = el("section", "pane" + (s.attention ? " needs" : "") + (s.external ? " ext" : "") + (s.host ? " remote" : "") + (s.down ? " down" : ""));
      card.setAttribute("data-name", s.name);
      if (s.host) { card.setAttribute("data-host", s.host); }
      var head = el("div", "pane-head");
      head.appendChild(el("b", "", s.name));
      head.appendChild(el("span", "prov", s.provider));
      head.appendChild(el("span", "state " + s.state, s.status));
      if (s.activity) { head.appendChild(el("span", "act", s.activity)); }
      if (s.attention) { head.appendChild(el("span", "att", s.attention + " need" + (s.attention === 1 ? "s" : "") + " you")); }
      if (s.state === "running" && !s.down) { var tl = el("a", "term", "terminal →"); tl.href = "/term/" + encodeURIComponent(s.name); head.appendChild(tl); }
      if (s.resets) { head.appendChild(el("span", "resets", s.resets)); }
      if (s.continues) { head.appendChild(el("span", "cont", "muster continues it then")); }
      if (s.branch) { var br = el("span", "branch", "⎇ " + s.branch); br.title = s.worktree || ""; head.appendChild(br); }
      if (s.cost) { head.appendChild(el("span", "cost" + (s.over ? " over" : ""), s.cost)); }
      if (s.link && s.link.indexOf("/session/") === 0) { var a = el("a", "conv", "conversation →"); a.href = s.link; head.appendChild(a); }
      card.appendChild(head);
      if (s.title || s.cwd) { card.appendChild(el("div", "pane-meta", [s.title, s.cwd].filter(Boolean).join(" · "))); }
      if (s.external) {
        var by = el("div", "pane-meta by", "run by " + s.run_by + ", not muster" + (s.open ? "; open it in a pane: " : ""));
        if (s.open) { by.appendChild(el("code", "", s.open)); }
        card.appendChild(by);
      }
      if (s.down) { card.appendChild(el("div", "pane-meta down", s.down)); }
      (s.reasons || []).forEach(function (r) { card.appendChild(el("div", "reason", r)); });
      if (s.screen) { card.appendChild(el("pre", "screen", s.screen)); }
      frag.appendChild(card);
    });
    var hosts = document.createDocumentFragment();
    (st.hosts || []).forEach(function (h) {
      var row = el("div", "hoststate " + (h.up ? "up" : "down"));
      row.setAttribute("data-host", h.name);
      row.appendChild(el("b", "", h.name));
      row.appendChild(document.createTextNode(" "));
      row.appendChild(el("span", "hstate", h.state));
      if (h.note) { row.appendChild(document.createTextNode(" ")); row.appendChild(el("span", "hnote", h.note)); }
      hosts.appendChild(row);
    });
    hostsBox.replaceChildren(hosts);
    total.textContent = st.total || "";
    extnote.textContent = st.external_error || "";
    extnote.hidden = !st.external_error;
    box.replaceChildren(frag);
    body.setAttribute("data-updates", String(Number(body.getAttribute("data-updates") || "0") + 1));
  }
  // The drawer: open attention items, oldest first. notes keeps what an
  // answer or acknowledgement said until its item leaves the drawer.
  var drawer = document.getElementById("drawer"), withheld = document.getElementById("withheld"), notes = {};
  function post(path, body, item, done) {
    var init = { method: "POST", credentials: "same-origin", headers: {} };
    if (body) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
    fetch(path, init).then(function (r) { return r.json().then(function (j) { return { ok: r.ok, j: j }; }); })
      .then(function (res) { done(res.ok, res.j || {}); })
      .catch(function (err) { done(false, { error: "the request failed: " + err }); });
  }
  function note(id, text, refused, screen) { notes[id] = { text: text, refused: refused, screen: screen }; }
  function renderDrawer(st) {
    var frag = document.createDocumentFragment(), open = {};
    (st.items || []).forEach(function (it) {
      open[it.id] = true;
      var sec = el("section", "item" + (it.down ? " down" : ""));
      sec.setAttribute("data-id", String(it.id));
      sec.setAttribute("data-session", it.session);
      var head = el("div", "item-head");
      head.appendChild(el("b", "", it.session));
      head.appendChild(el("span", "why", it.reason));
      sec.appendChild(head);
      if (it.down) { sec.appendChild(el("div", "msg down", it.down)); }
      if (it.message) { sec.appendChild(el("div", "msg", it.message)); }
      var d = it.dialog, n = notes[it.id];
      if (d) {
        sec.appendChild(el("div", "q", d.question));
        if (d.subject) { sec.appendChild(el("pre", "subj", d.subject)); }
        if (st.interactive) {
          var answers = el("div", "answers");
          d.options.forEach(function (o, i) {
            var b = el("button", "answer " + (o.answer || "other"), o.label);
            b.type = "button";
            b.setAttribute("data-option", String(i));
            b.setAttribute("data-answer", o.answer || "");
            b.addEventListener("click", function () {
              note(it.id, "sending " + o.label + "…", false);
              renderDrawer(last);
              post("/api/v1/attention/" + it.id + "/answer", { option: i, dialog: d.digest, session: it.session }, it, function (ok, j) {
                if (ok) { note(it.id, "sent: " + j.sent, false); }
                else { note(it.id, j.error || "refused", true, j.screen); }
                renderDrawer(last);
              });
            });
            answers.appendChild(b);
          });
          sec.appendChild(answers);
        }
      }
      if (n) {
        var res = el("div", "result" + (n.refused ? " refused" : ""), n.text);
        sec.appendChild(res);
      }
      var screen = n && n.screen ? n.screen : it.screen;
      if (screen) { sec.appendChild(el("pre", "screen", screen)); }
      var acts = el("div", "acts");
      if (st.interactive) {
        var ack = el("button", "ack", "Acknowledge");
        ack.type = "button";
        ack.addEventListener("click", function () {
          post("/api/v1/attention/" + it.id + "/ack", null, it, function (ok, j) {
            note(it.id, ok ? "acknowledged" : (j.error || "refused"), !ok);
            renderDrawer(last);
          });
        });
        acts.appendChild(ack);
      }
      if (it.running) {
        var tl = el("a", "term", "open the terminal →");
        tl.href = "/term/" + encodeURIComponent(it.session);
        acts.appendChild(tl);
        acts.appendChild(el("code", "attach", "muster attach " + it.session));
      }
      sec.appendChild(acts);
      frag.appendChild(sec);
    });
    Object.keys(notes).forEach(function (id) { if (!open[id]) { delete notes[id]; } });
    drawer.replaceChildren(frag);
  }
  var last = { items: [] };
  var prevRender = render;
  render = function (st) { last = st; withheld.hidden = !st.screens_withheld; renderDrawer(st); prevRender(st); };
  if (!window.EventSource) { return; }
  // #once takes one event and stops (a headless browser waits for every
  // open request before it dumps the page).
  var once = location.hash === "#once";
  var es = new EventSource(once ? "/live/events?once" : "/live/events");
  // window.musterLive.pause() stops the stream, as a lost connection
  // would, leaving the page as it was (the console's and the tests' way
  // to see what a click on an old screen does).
  window.musterLive = { pause: function () { es.close(); status.textContent = "paused"; body.setAttribute("data-stream", "paused"); } };
  es.addEventListener("open", function () { status.textContent = "live"; body.setAttribute("data-stream", "open"); });
  es.addEventListener("error", function () { status.textContent = "reconnecting…"; body.setAttribute("data-stream", "error"); });
  es.addEventListener("live", function (e) {
    try { render(JSON.parse(e.data)); } catch (err) { status.textContent = "bad event"; }
    if (once) { es.close(); status.textContent = "stopped (#once)"; }
  });
})();`
