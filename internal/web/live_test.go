package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/poll"
)

// readEvent reads the next "live" event of an event stream.
func readEvent(t *testing.T, r *bufio.Reader) liveState {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read event stream: %v", err)
		}
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			var st liveState
			if err := json.Unmarshal([]byte(data), &st); err != nil {
				t.Fatalf("event data %q: %v", data, err)
			}
			return st
		}
	}
}

// TestLiveEvents: over a real listener, the Live page's stream sends the
// panes with state, attention and screen, then a new event when they
// change, and ends when the server stops.
func TestLiveEvents(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	screen := "$ make\nbuilding…\n\n\n"
	rs := "running"
	f.setLive([]proto.SessionInfo{{Name: "api", Provider: "fake", State: "running", RunState: &rs, NativeSessionID: "aaaa-1111", Attention: 1}}, nil)
	f.srv = f.server(t, func(o *Options) {
		o.LiveInterval = 20 * time.Millisecond
		o.Capture = func(ctx context.Context, name string) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			return screen, nil
		}
		o.Attention = func(ctx context.Context) ([]proto.AttentionItem, error) {
			return []proto.AttentionItem{{SessionName: "api", Reason: "approval-requested", Message: "Run rm -rf build?", Open: true},
				{SessionName: "api", Reason: "failed", Open: false}}, nil
		}
	})
	ln := listen(t, f.srv)
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+ln+"/live/events", nil)
	req.Header.Set("Authorization", "Bearer "+f.srv.o.Token) // screens need it
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	r := bufio.NewReader(resp.Body)
	st := readEvent(t, r)
	if !st.Running || len(st.Sessions) != 1 {
		t.Fatalf("first event: %+v", st)
	}
	s := st.Sessions[0]
	if s.Name != "api" || s.RunState != "running" || s.Attention != 1 || s.Screen != "$ make\nbuilding…" ||
		s.Link != "/session/fake/aaaa-1111" || len(s.Reasons) != 1 || s.Reasons[0] != "approval-requested: Run rm -rf build?" {
		t.Errorf("first event's session: %+v", s)
	}
	// A change on the screen and in the run state: the next event has it.
	mu.Lock()
	screen = "$ make\ndone\n"
	mu.Unlock()
	rs2 := "waitingInput"
	f.setLive([]proto.SessionInfo{{Name: "api", Provider: "fake", State: "running", RunState: &rs2, NativeSessionID: "aaaa-1111"}}, nil)
	for range 50 {
		st = readEvent(t, r)
		if st.Sessions[0].RunState == "waitingInput" && st.Sessions[0].Screen == "$ make\ndone" {
			break
		}
	}
	if st.Sessions[0].RunState != "waitingInput" || st.Sessions[0].Screen != "$ make\ndone" {
		t.Errorf("the change never arrived: %+v", st)
	}
	// The daemon stops: an event says so.
	f.setLive(nil, context.DeadlineExceeded)
	for range 50 {
		if st = readEvent(t, r); !st.Running {
			break
		}
	}
	if st.Running {
		t.Error("no event said the daemon stopped")
	}
}

func TestLivePageScript(t *testing.T) {
	f := newFixture(t)
	rec := f.get(t, "/live", nil)
	csp := rec.Header().Get("Content-Security-Policy")
	body := rec.Body.String()
	i := strings.Index(csp, "'nonce-")
	if i < 0 || !strings.Contains(csp, "connect-src 'self'") || !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("Live CSP: %q", csp)
	}
	nonce := csp[i+len("'nonce-") : i+strings.Index(csp[i:], "';")]
	if !strings.Contains(body, `<script nonce="`+nonce+`">`) || strings.Count(body, "<script") != 1 {
		t.Error("the page's script does not carry the CSP nonce")
	}
	again := f.get(t, "/live", nil).Header().Get("Content-Security-Policy")
	if again == csp {
		t.Error("the nonce is the same on two requests")
	}
	if strings.Contains(f.get(t, "/", nil).Header().Get("Content-Security-Policy"), "script-src") {
		t.Error("a page without a script allows scripts")
	}
}

func TestPreviewText(t *testing.T) {
	long := strings.Repeat("x", 300)
	var lines []string
	for range 40 {
		lines = append(lines, "line")
	}
	lines = append(lines, long+"   ", "\x1b[31mred\x1b[0m", "", "")
	got := previewText(strings.Join(lines, "\n"))
	gl := strings.Split(got, "\n")
	if len(gl) != previewLines || gl[len(gl)-1] != "red" || len([]rune(gl[len(gl)-2])) != previewCols {
		t.Errorf("previewText: %d lines, last %q", len(gl), gl[len(gl)-1])
	}
}

// fakeDaemon serves the Live page's streams from channels: each watch
// call takes updates from watches until the test closes the current one
// (the daemon going away), and each pane's preview takes screens from
// screens.
type fakeDaemon struct {
	mu          sync.Mutex
	watchCalls  int
	watchActive int
	watches     chan chan proto.WatchUpdate
	screens     chan proto.PreviewScreen
}

func (d *fakeDaemon) watch(ctx context.Context, push func(proto.WatchUpdate)) error {
	d.mu.Lock()
	d.watchCalls++
	d.watchActive++
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.watchActive--
		d.mu.Unlock()
	}()
	var updates chan proto.WatchUpdate
	select {
	case <-ctx.Done():
		return ctx.Err()
	case updates = <-d.watches:
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case u, ok := <-updates:
			if !ok {
				return errors.New("daemon closed the connection")
			}
			push(u)
		}
	}
}

func (d *fakeDaemon) preview(ctx context.Context, name string, push func(proto.PreviewScreen)) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ps := <-d.screens:
			push(ps)
		}
	}
}

// TestLiveEventsPushed: with the daemon's watch and preview streams, the
// Live page's events follow what the daemon pushes without asking it
// anything else, two pages share one watch, a daemon that goes away and
// comes back is shown both ways, and the watch ends with the last page.
func TestLiveEventsPushed(t *testing.T) {
	f := newFixture(t)
	d := &fakeDaemon{watches: make(chan chan proto.WatchUpdate), screens: make(chan proto.PreviewScreen)}
	var polled sync.Mutex
	polls := 0
	f.srv = f.server(t, func(o *Options) {
		o.LiveInterval = 20 * time.Millisecond // the retry; nothing is polled
		o.Watch, o.Preview = d.watch, d.preview
		o.Live = func(context.Context) ([]proto.SessionInfo, error) {
			polled.Lock()
			polls++
			polled.Unlock()
			return nil, nil
		}
		o.Capture = func(context.Context, string) (string, error) {
			t.Error("Capture called in pushed mode")
			return "", nil
		}
	})
	ln := listen(t, f.srv)
	open := func(ctx context.Context) *bufio.Reader {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+ln+"/live/events", nil)
		req.Header.Set("Authorization", "Bearer "+f.srv.o.Token) // screens need it
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return bufio.NewReader(resp.Body)
	}
	until := func(r *bufio.Reader, what string, ok func(liveState) bool) liveState {
		t.Helper()
		for range 100 {
			if st := readEvent(t, r); ok(st) {
				return st
			}
		}
		t.Fatalf("no event with %s", what)
		return liveState{}
	}

	ctx1, close1 := context.WithCancel(t.Context())
	r1 := open(ctx1)
	ctx2, close2 := context.WithCancel(t.Context())
	r2 := open(ctx2)
	updates := make(chan proto.WatchUpdate, 4)
	d.watches <- updates
	rs := "running"
	updates <- proto.WatchUpdate{
		Sessions:  []proto.SessionInfo{{Name: "api", Provider: "fake", State: "running", RunState: &rs, Attention: 1}, {Name: "old", State: "exited"}},
		Attention: []proto.AttentionItem{{SessionName: "api", Reason: "approval-requested", Message: "Run rm -rf build?", Open: true}},
	}
	d.screens <- proto.PreviewScreen{Name: "api", Lines: []string{"$ make", "building…"}}
	for _, r := range []*bufio.Reader{r1, r2} {
		st := until(r, "the pushed screen", func(st liveState) bool {
			return st.Running && len(st.Sessions) == 2 && st.Sessions[0].Screen == "$ make\nbuilding…"
		})
		if s := st.Sessions[0]; s.Name != "api" || len(s.Reasons) != 1 || s.Reasons[0] != "approval-requested: Run rm -rf build?" {
			t.Errorf("pushed session: %+v", s)
		}
	}
	// Only the attention list changes: the item is resolved.
	updates <- proto.WatchUpdate{Attention: []proto.AttentionItem{{SessionName: "api", Reason: "approval-requested", Open: false}}}
	until(r1, "the item resolved", func(st liveState) bool { return len(st.Sessions) == 2 && len(st.Sessions[0].Reasons) == 0 })

	// The daemon goes away, then a new one pushes its state.
	close(updates)
	until(r1, "no daemon", func(st liveState) bool { return !st.Running })
	updates = make(chan proto.WatchUpdate, 4)
	d.watches <- updates
	updates <- proto.WatchUpdate{Sessions: []proto.SessionInfo{{Name: "new", State: "running"}}, Attention: []proto.AttentionItem{}}
	until(r2, "the new daemon's session", func(st liveState) bool {
		return st.Running && len(st.Sessions) == 1 && st.Sessions[0].Name == "new"
	})

	d.mu.Lock()
	calls := d.watchCalls
	d.mu.Unlock()
	if calls != 2 {
		t.Errorf("%d watch calls for two pages and one daemon restart, want 2", calls)
	}
	polled.Lock()
	if polls != 0 {
		t.Errorf("the daemon was polled %d times", polls)
	}
	polled.Unlock()

	// The last page closes: the watch ends.
	close1()
	close2()
	poll.Wait(t, 10*time.Second, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.watchActive == 0
	}, func() string { return "the watch outlived every page" })
}

// TestLiveStateCost: a sampled pane shows its memory and CPU, one over
// its ceiling says so, and the page totals every sampled pane.
func TestLiveStateCost(t *testing.T) {
	f := newFixture(t)
	srv := f.server(t, func(*Options) {})
	rss1, rss2, cpu1 := int64(1288490188), int64(350<<20), 12.5
	st := srv.liveState(liveInput{running: true, sessions: []proto.SessionInfo{
		{Name: "api", State: "running", RSSBytes: &rss1, CPUPercent: &cpu1, MemoryCeiling: 1 << 30},
		{Name: "docs", State: "running", RSSBytes: &rss2},
		{Name: "old", State: "exited"},
	}, screens: true, screen: func(string) string { return "" }})
	want := []struct {
		cost string
		over bool
	}{{"1.2G (over its 1.0G ceiling) · 12% CPU", true}, {"350M", false}, {"", false}}
	for i, w := range want {
		if s := st.Sessions[i]; s.Cost != w.cost || s.Over != w.over {
			t.Errorf("%s: cost %q over %v; want %q %v", s.Name, s.Cost, s.Over, w.cost, w.over)
		}
	}
	if st.Total != "agents 1.5G, 12% CPU" {
		t.Errorf("total %q", st.Total)
	}
}

// liveEventOnce is the first event of the Live page's stream, as a page
// without the token gets it.
func liveEventOnce(t *testing.T, f *fixture) liveState {
	t.Helper()
	rec := f.get(t, "/live/events?once", nil)
	return readEvent(t, bufio.NewReader(rec.Body))
}

// TestLiveLifecycle: the Live page says what `muster ls` says of a
// session stopped at its usage limit (the state word, when the limit
// resets, whether Muster continues it then) and of one in a worktree of
// its own (its branch, changes and commits), in the page and in its
// events, with what the agent or git named redacted.
func TestLiveLifecycle(t *testing.T) {
	f := newFixture(t)
	limited, running := string(proto.StateLimited), "running"
	today, tomorrow := "2026-03-01T15:04:00Z", "2026-03-02T09:30:00Z"
	f.setLive([]proto.SessionInfo{
		{Name: "capped", Provider: "fake", State: "running", RunState: &limited, LimitResetsAt: &today, ContinueAfterLimit: true},
		{Name: "later", Provider: "fake", State: "running", RunState: &limited, LimitResetsAt: &tomorrow},
		{Name: "unsaid", Provider: "fake", State: "running", RunState: &limited, ContinueAfterLimit: true},
		{Name: "tree", Provider: "fake", State: "running", RunState: &running, Worktree: &proto.WorktreeInfo{
			Path: "/src/app-tree", Branch: "fix-" + secrets[1].text, Exists: true, Dirty: 3, Ahead: 2}},
		{Name: "fresh", Provider: "fake", State: "running", RunState: &running, Worktree: &proto.WorktreeInfo{
			Path: "/src/app-fresh", Branch: "muster/fresh", Exists: true}},
	}, nil)
	f.srv = f.server(t, func(o *Options) {
		o.Now = func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
		o.Location = time.UTC
	})
	type want struct {
		status, resets string
		continues      bool
		branch, words  string
	}
	wants := map[string]want{
		"capped": {status: "limited", resets: "resets 15:04", continues: true},
		"later":  {status: "limited", resets: "resets Mar 2 09:30"},
		// ls says nothing of a continue without a reset time: neither
		// does the page.
		"unsaid": {status: "limited"},
		"tree": {status: "running", branch: "fix-[REDACTED:anthropic-key]* ↑2",
			words: "worktree /src/app-tree on fix-[REDACTED:anthropic-key], 3 changed files, 2 commits since its base"},
		"fresh": {status: "running", branch: "muster/fresh", words: "worktree /src/app-fresh on muster/fresh, clean"},
	}
	st := liveEventOnce(t, f)
	if len(st.Sessions) != len(wants) {
		t.Fatalf("event: %d sessions, want %d: %+v", len(st.Sessions), len(wants), st.Sessions)
	}
	for _, s := range st.Sessions {
		w := wants[s.Name]
		if s.Status != w.status || s.Resets != w.resets || s.Continues != w.continues || s.Branch != w.branch || s.Worktree != w.words {
			t.Errorf("event's %s: status %q resets %q continues %v branch %q worktree %q; want %+v", s.Name, s.Status, s.Resets, s.Continues, s.Branch, s.Worktree, w)
		}
	}
	if s := st.Sessions[0]; s.Name != "capped" || s.LimitResetsAt != today {
		t.Errorf("event's capped: limit_resets_at %q", s.LimitResetsAt)
	}

	body := f.get(t, "/live", nil).Body.String()
	for _, w := range []string{
		`<span class="state running">limited</span><span class="resets">resets 15:04</span><span class="cont">muster continues it then</span>`,
		`<span class="resets">resets Mar 2 09:30</span>`,
		`<span class="branch" title="worktree /src/app-tree on fix-[REDACTED:anthropic-key], 3 changed files, 2 commits since its base">⎇ fix-[REDACTED:anthropic-key]* ↑2</span>`,
		`<span class="branch" title="worktree /src/app-fresh on muster/fresh, clean">⎇ muster/fresh</span>`,
	} {
		if !strings.Contains(body, w) {
			t.Errorf("the page lacks %s", w)
		}
	}
	if n := strings.Count(body, `class="cont"`); n != 1 {
		t.Errorf("the page says %d times that muster continues a session, want once", n)
	}
	if strings.Contains(body, secrets[1].leak) {
		t.Error("the page shows the secret in a branch's name")
	}
}

// backgroundAgent is a row as the CLI lists an agent Claude Code's
// supervisor runs (cli's externalRows).
func backgroundAgent(name, cwd string) proto.SessionInfo {
	return proto.SessionInfo{ID: "0b6ecd0a", Name: name, Provider: "fake", Pane: proto.PaneExternal, State: proto.PaneExternal,
		Status: "idle", PID: 6634, CWD: cwd, NativeSessionID: "aaaa-1111", NativeConfirmed: true, Command: "claude attach 0b6ecd0a",
		External: &proto.ExternalAgent{Supervisor: "fake agents", ID: "0b6ecd0a", Status: "idle", State: "working", Attach: "claude attach 0b6ecd0a"}}
}

// TestLiveExternal: the agents a CLI's own supervisor runs are listed
// after the panes, marked as the dashboard marks them, with the command
// that opens one in a pane and no terminal of their own; the listing is
// asked with the panes (an agent a pane runs is the pane's) and shared
// by the page and its events; a supervisor that fails is said once.
func TestLiveExternal(t *testing.T) {
	f := newFixture(t)
	rs := "running"
	f.setLive([]proto.SessionInfo{{Name: "zed", Provider: "fake", State: "running", RunState: &rs}}, nil)
	var mu sync.Mutex
	calls := 0
	var asked []string
	listErr := errors.New("fake agents --json: exit status 1")
	f.srv = f.server(t, func(o *Options) {
		o.ExternalInterval = time.Hour
		o.External = func(ctx context.Context, panes []proto.SessionInfo) ([]proto.SessionInfo, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			for _, p := range panes {
				asked = append(asked, p.Name)
			}
			return []proto.SessionInfo{backgroundAgent("bg-fix", "/src/"+secrets[0].text)}, listErr
		}
	})
	st := liveEventOnce(t, f)
	if len(st.Sessions) != 2 || st.Sessions[0].Name != "zed" {
		t.Fatalf("event: %+v", st.Sessions)
	}
	x := st.Sessions[1]
	if !x.External || x.Name != "bg-fix" || x.State != "external" || x.Status != "↗ external idle" || x.Activity != "working" ||
		x.RunBy != "fake agents" || x.Open != "muster new fake --cmd 'claude attach 0b6ecd0a'" ||
		x.Link != "/session/fake/aaaa-1111" || x.CWD != "/src/password=[REDACTED:secret]" {
		t.Errorf("event's background agent: %+v", x)
	}
	if st.ExternalError != "background agents: fake agents --json: exit status 1" {
		t.Errorf("event's external error %q", st.ExternalError)
	}
	body := f.get(t, "/live", nil).Body.String()
	i := strings.Index(body, `<section class="pane ext" data-name="bg-fix">`)
	if i < 0 {
		t.Fatalf("the page has no external row:\n%s", body)
	}
	row := body[i:]
	row = row[:strings.Index(row, "</section>")]
	for _, w := range []string{`<span class="state external">↗ external idle</span><span class="act">working</span>`,
		`<div class="pane-meta by">run by fake agents, not muster; open it in a pane: <code>muster new fake --cmd &#39;claude attach 0b6ecd0a&#39;</code></div>`,
		`<a class="conv" href="/session/fake/aaaa-1111">`} {
		if !strings.Contains(row, w) {
			t.Errorf("the external row lacks %s:\n%s", w, row)
		}
	}
	if strings.Contains(row, "/term/") {
		t.Errorf("the external row offers a terminal:\n%s", row)
	}
	if !strings.Contains(body, `<p class="muted" id="extnote">background agents: fake agents --json: exit status 1</p>`) {
		t.Error("the page does not say the listing failed")
	}
	if strings.Contains(body, secrets[0].leak) {
		t.Error("the page shows the secret in an agent's directory")
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Errorf("%d listings for an event and a page within the interval, want 1", calls)
	}
	if len(asked) != 1 || asked[0] != "zed" {
		t.Errorf("the listing was asked with panes %v, want [zed]", asked)
	}
}

// TestLiveExternalPushed: with the daemon's watch, the background agents
// are listed once the panes are pushed (with them), shared by every
// page, and listed again each interval while a page listens: a new
// agent reaches the page with no push of the daemon's.
func TestLiveExternalPushed(t *testing.T) {
	f := newFixture(t)
	d := &fakeDaemon{watches: make(chan chan proto.WatchUpdate), screens: make(chan proto.PreviewScreen)}
	var mu sync.Mutex
	var asked [][]string
	agents := []proto.SessionInfo{backgroundAgent("bg-one", "/src/bg")}
	f.srv = f.server(t, func(o *Options) {
		o.LiveInterval = 20 * time.Millisecond
		o.ExternalInterval = 50 * time.Millisecond
		o.Watch, o.Preview = d.watch, d.preview
		o.External = func(ctx context.Context, panes []proto.SessionInfo) ([]proto.SessionInfo, error) {
			mu.Lock()
			defer mu.Unlock()
			var names []string
			for _, p := range panes {
				names = append(names, p.Name)
			}
			asked = append(asked, names)
			return agents, nil
		}
	})
	ln := listen(t, f.srv)
	open := func() *bufio.Reader {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+ln+"/live/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return bufio.NewReader(resp.Body)
	}
	until := func(r *bufio.Reader, what string, ok func(liveState) bool) {
		t.Helper()
		for range 200 {
			if ok(readEvent(t, r)) {
				return
			}
		}
		t.Fatalf("no event with %s", what)
	}
	names := func(st liveState) string {
		var out []string
		for _, s := range st.Sessions {
			out = append(out, s.Name)
		}
		return strings.Join(out, " ")
	}
	r1, r2 := open(), open()
	updates := make(chan proto.WatchUpdate, 4)
	d.watches <- updates
	updates <- proto.WatchUpdate{Sessions: []proto.SessionInfo{{Name: "api", Provider: "fake", State: "running"}}, Attention: []proto.AttentionItem{}}
	for _, r := range []*bufio.Reader{r1, r2} {
		until(r, "the pane and the agent", func(st liveState) bool { return names(st) == "api bg-one" })
	}
	mu.Lock()
	if len(asked) == 0 || len(asked[0]) != 1 || asked[0][0] != "api" {
		t.Errorf("the first listing was asked with panes %v, want [api]", asked)
	}
	agents = append(agents, backgroundAgent("bg-two", "/src/bg"))
	mu.Unlock()
	until(r1, "the new agent", func(st liveState) bool { return names(st) == "api bg-one bg-two" })
}
