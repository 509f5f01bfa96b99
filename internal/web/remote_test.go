package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// fakeRemote plays the hosts: Follow pushes what the test sends on
// pushes, Preview pushes each host session's screen once, Attention
// answers items (or err).
type fakeRemote struct {
	pushes chan []HostState

	mu        sync.Mutex
	screens   map[string]string
	previewed []string
	items     []proto.AttentionItem
	err       error
	asked     []int64
}

func (r *fakeRemote) Follow(ctx context.Context, push func([]HostState)) {
	for {
		select {
		case <-ctx.Done():
			return
		case hs := <-r.pushes:
			push(hs)
		}
	}
}

func (r *fakeRemote) Preview(ctx context.Context, name string, push func(proto.PreviewScreen)) error {
	r.mu.Lock()
	r.previewed = append(r.previewed, name)
	screen := r.screens[name]
	r.mu.Unlock()
	push(proto.PreviewScreen{Name: name, Lines: strings.Split(screen, "\n")})
	<-ctx.Done()
	return nil
}

func (r *fakeRemote) HostItem(id int64) bool { return id >= 1<<40 }

func (r *fakeRemote) Attention(ctx context.Context, id int64) ([]proto.AttentionItem, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, id)
	return r.items, r.err
}

// hostItem is item 3 of the first host, numbered as the CLI numbers it.
const hostItem = 1<<40 + 3

// TestLiveHosts: the Live page lists this machine's panes first, on
// their own while the hosts have not answered, then each host's
// sessions under their HOST:NAME with the host marked; a host that is
// down is said with its reason, what to run and when it was last seen,
// and its rows are dimmed, with no terminal, screen or conversation
// link; the drawer holds the hosts' items, the one on a live host with
// the dialog read off its screen. Only the screen of a host session with
// an open item is followed.
func TestLiveHosts(t *testing.T) {
	f := newFixture(t)
	d := &fakeDaemon{watches: make(chan chan proto.WatchUpdate), screens: make(chan proto.PreviewScreen)}
	rem := &fakeRemote{pushes: make(chan []HostState), screens: map[string]string{"h1:x": permissionScreen(t)}}
	f.srv = f.server(t, func(o *Options) {
		o.LiveInterval = 20 * time.Millisecond
		o.Watch, o.Preview = d.watch, d.preview
		o.Remote = rem
		o.Now = func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
		o.Location = time.UTC
	})
	ln := listen(t, f.srv)
	bearer := "Bearer " + f.srv.o.Token
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+ln+"/live/events", nil)
	req.Header.Set("Authorization", bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	updates := make(chan proto.WatchUpdate, 4)
	d.watches <- updates
	rs := "running"
	updates <- proto.WatchUpdate{Sessions: []proto.SessionInfo{{Name: "api", Provider: "fake", State: "running", RunState: &rs}}, Attention: []proto.AttentionItem{}}

	// The hosts have not answered yet: this machine's rows do not wait.
	st := readEvent(t, r)
	if !st.Running || len(st.Sessions) != 1 || st.Sessions[0].Name != "api" || len(st.Hosts) != 0 {
		t.Fatalf("first event, before any host answered: %+v", st)
	}

	rem.pushes <- []HostState{
		{Name: "h1", State: "connected", Connected: true,
			Sessions: []proto.SessionInfo{
				{Name: "h1:x", Provider: "claude", State: "running", RunState: &rs, NativeSessionID: "aaaa-1111", Attention: 1},
				{Name: "h1:quiet", Provider: "fake", State: "running", RunState: &rs}},
			Attention: []proto.AttentionItem{{ID: hostItem, Host: "h1", SessionName: "h1:x", Provider: "claude", Reason: "approval-requested", Message: "Bash: touch fake-created.txt", Open: true}}},
		{Name: "h2", State: "unreachable", Reason: "connect to host 127.0.0.1 port 2222: Connection refused",
			LastSeen:  time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC),
			Sessions:  []proto.SessionInfo{{Name: "h2:y", Provider: "claude", State: "running", RunState: &rs, Attention: 1}},
			Attention: []proto.AttentionItem{{ID: 2<<40 + 1, Host: "h2", SessionName: "h2:y", Provider: "claude", Reason: "approval-requested", Open: true}}},
		{Name: "h3", State: "needs-attention", Reason: "Host key verification failed.", Command: "ssh -o ControlMaster=auto -- h3 true"},
	}
	for range 100 {
		st = readEvent(t, r)
		if len(st.Hosts) == 3 && len(st.Items) == 2 && st.Items[0].Dialog != nil {
			break
		}
	}
	var names []string
	for _, s := range st.Sessions {
		names = append(names, s.Name+"@"+s.Host)
	}
	if strings.Join(names, " ") != "api@ h1:quiet@h1 h1:x@h1 h2:y@h2" {
		t.Fatalf("rows: %v", names)
	}
	h1x, h2y := st.Sessions[2], st.Sessions[3]
	if h1x.Down != "" || h1x.Link != "" || h1x.Status != "running" {
		t.Errorf("h1:x: %+v", h1x)
	}
	if h2y.Down != "h2 unreachable; last seen 11:00" || h2y.Screen != "" {
		t.Errorf("h2:y, on a host that is down: %+v", h2y)
	}
	wantHosts := []liveHost{{Name: "h1", State: "connected", Up: true},
		{Name: "h2", State: "unreachable", Note: "connect to host 127.0.0.1 port 2222: Connection refused; last seen 11:00"},
		{Name: "h3", State: "needs-attention", Note: "Host key verification failed.; run once by hand: ssh -o ControlMaster=auto -- h3 true; never seen"}}
	if fmt.Sprint(st.Hosts) != fmt.Sprint(wantHosts) {
		t.Errorf("hosts:\n%+v\nwant\n%+v", st.Hosts, wantHosts)
	}
	it, down := st.Items[0], st.Items[1]
	if it.ID != hostItem || it.Host != "h1" || !it.Running || it.Dialog == nil || it.Dialog.Question != "Do you want to proceed?" {
		t.Errorf("h1's item: %+v", it)
	}
	if down.Host != "h2" || down.Running || down.Dialog != nil || down.Down != "h2 unreachable; last seen 11:00" {
		t.Errorf("h2's item, its host down: %+v", down)
	}
	rem.mu.Lock()
	if fmt.Sprint(rem.previewed) != "[h1:x]" {
		t.Errorf("host screens followed: %v, want only h1:x's (an open item on a live host)", rem.previewed)
	}
	rem.mu.Unlock()

	// The page, while the hub follows the hosts, shows them too.
	body := f.get(t, "/live", map[string]string{"Authorization": bearer}).Body.String()
	for _, w := range []string{
		`<div class="hoststate up" data-host="h1"><b>h1</b> <span class="hstate">connected</span></div>`,
		`<div class="hoststate down" data-host="h2"><b>h2</b> <span class="hstate">unreachable</span> <span class="hnote">connect to host 127.0.0.1 port 2222: Connection refused; last seen 11:00</span></div>`,
		`<section class="pane needs remote" data-name="h1:x" data-host="h1">`,
		`<a class="term" href="/term/h1:x">terminal →</a>`,
		`<section class="pane needs remote down" data-name="h2:y" data-host="h2">`,
		`<div class="pane-meta down">h2 unreachable; last seen 11:00</div>`,
		`<section class="item down" data-id="2199023255553" data-session="h2:y">`,
	} {
		if !strings.Contains(body, w) {
			t.Errorf("the page lacks %s", w)
		}
	}
	if strings.Contains(body, `href="/term/h2:y"`) || strings.Contains(body, "/session/claude/aaaa-1111") {
		t.Error("the page offers h2:y's terminal, or links h1:x's conversation to this machine's history")
	}
}

// TestDrawerAnswersHostItem: an answer to a host's item reads that
// host's items and its session's screen afresh (never this machine's
// list) and sends the option's keys to HOST:NAME only while the screen
// still shows the dialog the page showed; a host that does not answer is
// said in one line, and nothing is sent.
func TestDrawerAnswersHostItem(t *testing.T) {
	f := newFixture(t)
	screen := permissionScreen(t)
	var mu sync.Mutex
	var captured, sent []string
	localAsked := 0
	rem := &fakeRemote{pushes: make(chan []HostState), items: []proto.AttentionItem{
		{ID: hostItem, Host: "h1", SessionName: "h1:x", Provider: "claude", Reason: "approval-requested", Open: true}}}
	f.srv = f.server(t, func(o *Options) {
		o.Interactive = true
		o.Remote = rem
		o.Attention = func(context.Context) ([]proto.AttentionItem, error) {
			mu.Lock()
			defer mu.Unlock()
			localAsked++
			return nil, nil
		}
		o.Capture = func(ctx context.Context, name string) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			captured = append(captured, name)
			return screen, nil
		}
		o.Send = func(ctx context.Context, name, keys string) error {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, name+":"+keys)
			return nil
		}
	})
	base := "http://" + listen(t, f.srv)
	page := map[string]string{"Cookie": f.srv.cookie + "=" + f.srv.o.Token, "Origin": base}
	dlg, ok := readDialog("claude", previewText(screen))
	if !ok {
		t.Fatal("the fixture shows no dialog")
	}
	answer := fmt.Sprintf("%s/api/v1/attention/%d/answer", base, int64(hostItem))
	body := `{"option":3,"dialog":"` + dialogDigest(dlg) + `","session":"h1:x"}`

	mu.Lock()
	screen = strings.ReplaceAll(screen, "touch fake-created.txt", "rm -rf build")
	mu.Unlock()
	if code, m := postJSON(t, answer, body, page); code != http.StatusConflict || !strings.Contains(m["error"], "session h1:x's dialog changed") || !strings.Contains(m["screen"], "rm -rf build") {
		t.Errorf("a stale click on a host's item: %d %v", code, m)
	}
	mu.Lock()
	screen = permissionScreen(t)
	mu.Unlock()
	if code, m := postJSON(t, answer, body, page); code != http.StatusOK || m["sent"] != "No" || m["session"] != "h1:x" {
		t.Errorf("the click: %d %v", code, m)
	}

	rem.mu.Lock()
	rem.err = errors.New("host h1: unreachable: connect to host 127.0.0.1 port 2222: Connection refused")
	rem.mu.Unlock()
	if code, m := postJSON(t, answer, body, page); code != http.StatusBadGateway ||
		m["error"] != "host h1: unreachable: connect to host 127.0.0.1 port 2222: Connection refused: nothing was sent" {
		t.Errorf("a click while the host is down: %d %v", code, m)
	}

	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(sent) != "[h1:x:4]" {
		t.Errorf("sent %q, want h1:x's No (4) once", sent)
	}
	if localAsked != 0 {
		t.Errorf("this machine's daemon was asked for its items %d times for a host's item", localAsked)
	}
	for _, c := range captured {
		if c != "h1:x" {
			t.Errorf("captured %q for h1:x's item", c)
		}
	}
	rem.mu.Lock()
	defer rem.mu.Unlock()
	if len(rem.asked) != 3 || rem.asked[0] != hostItem {
		t.Errorf("the host was asked for items %v", rem.asked)
	}
}
