package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

// drawerDaemon plays the daemon's side of the drawer: one attention item
// of a Claude Code pane, its screen, and the keys sent to it.
type drawerDaemon struct {
	mu     sync.Mutex
	screen string
	open   bool
	sent   []string
}

func (d *drawerDaemon) set(o *Options) {
	o.Capture = func(ctx context.Context, name string) (string, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.screen, nil
	}
	o.Attention = func(ctx context.Context) ([]proto.AttentionItem, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		if !d.open {
			return nil, nil // op attention lists open items only
		}
		return []proto.AttentionItem{{ID: 7, SessionName: "api", Provider: "claude", Reason: "approval-requested", Message: "Bash: touch fake-created.txt", Open: true}}, nil
	}
	o.Send = func(ctx context.Context, name, keys string) error {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.sent = append(d.sent, name+":"+keys)
		d.screen = "❯ \n"
		return nil
	}
}

func (d *drawerDaemon) keys() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.sent...)
}

func permissionScreen(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/claude-permission.txt")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// onceEvent reads the Live page's first event with hdr.
func onceEvent(t *testing.T, base string, hdr map[string]string) liveState {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/live/events?once", nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /live/events: %s", resp.Status)
	}
	return readEvent(t, bufio.NewReader(resp.Body))
}

func postJSON(t *testing.T, url, body string, hdr map[string]string) (int, map[string]string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]string
	json.Unmarshal(b, &m)
	if m == nil {
		m = map[string]string{"body": string(b)}
	}
	return resp.StatusCode, m
}

// TestDrawerAnswers: the drawer shows the item with Claude Code's own
// options read off the screen; a click sends that option's digit; a click
// on a dialog that has since changed, on an item no longer open, from
// another origin or without the token sends nothing.
func TestDrawerAnswers(t *testing.T) {
	f := newFixture(t)
	d := &drawerDaemon{screen: permissionScreen(t), open: true}
	f.setLive([]proto.SessionInfo{{Name: "api", Provider: "claude", State: "running", Attention: 1}}, nil)
	f.srv = f.server(t, func(o *Options) { o.Interactive = true; d.set(o) })
	ln := listen(t, f.srv)
	base := "http://" + ln
	bearer := map[string]string{"Authorization": "Bearer " + f.srv.o.Token}
	page := map[string]string{"Cookie": f.srv.cookie + "=" + f.srv.o.Token, "Origin": base}

	st := onceEvent(t, base, bearer)
	if len(st.Items) != 1 || st.Items[0].Dialog == nil {
		t.Fatalf("the drawer: %+v", st.Items)
	}
	it := st.Items[0]
	var labels []string
	for _, o := range it.Dialog.Options {
		labels = append(labels, o.Label+"/"+o.Answer)
	}
	if it.ID != 7 || it.Dialog.Question != "Do you want to proceed?" || it.Dialog.Subject != "touch fake-created.txt && echo done" ||
		strings.Join(labels, "|") != "Yes/once|Yes, and always allow access to $SCRATCH/repo-claude from this project/always|Yes, and switch to auto mode · auto mode handles these prompts for you/|No/deny" ||
		!strings.Contains(it.Screen, "Do you want to proceed?") || !st.Interactive {
		t.Errorf("the drawer's item: %+v %+v", it, it.Dialog)
	}
	answer := base + "/api/v1/attention/7/answer"
	body := `{"option":3,"dialog":"` + it.Dialog.Digest + `"}`

	// Refused before anything is sent: another origin, no token, a bad body.
	for name, hdr := range map[string]map[string]string{
		"cross-origin": {"Cookie": page["Cookie"], "Origin": "http://evil.example"},
		"no token":     {"Origin": base},
		"wrong token":  {"Cookie": f.srv.cookie + "=" + strings.Repeat("A", 26), "Origin": base},
	} {
		if code, m := postJSON(t, answer, body, hdr); code != http.StatusForbidden && code != http.StatusUnauthorized {
			t.Errorf("%s: %d %v", name, code, m)
		}
	}
	for _, bad := range []string{`{}`, `{"option":3}`, `{"option":9,"dialog":"` + it.Dialog.Digest + `"}`, `{"option":-1,"dialog":"` + it.Dialog.Digest + `"}`, `not json`, `{"option":1,"dialog":"x","keys":"rm -rf /\r"}`} {
		if code, m := postJSON(t, answer, bad, page); code != http.StatusBadRequest {
			t.Errorf("body %s: %d %v", bad, code, m)
		}
	}
	if got := d.keys(); len(got) != 0 {
		t.Fatalf("keys were sent by refused requests: %q", got)
	}

	// The dialog changed (another command) since the page showed it.
	d.mu.Lock()
	d.screen = strings.ReplaceAll(d.screen, "touch fake-created.txt", "rm -rf build")
	d.mu.Unlock()
	code, m := postJSON(t, answer, body, page)
	if code != http.StatusConflict || !strings.Contains(m["error"], "dialog changed") || !strings.Contains(m["screen"], "rm -rf build") {
		t.Errorf("a stale click: %d %v", code, m)
	}
	if got := d.keys(); len(got) != 0 {
		t.Fatalf("a stale click sent %q", got)
	}

	// The dialog as shown: No is Claude Code's digit 4.
	d.mu.Lock()
	d.screen = permissionScreen(t)
	d.mu.Unlock()
	if code, m := postJSON(t, answer, body, page); code != http.StatusOK || m["sent"] != "No" {
		t.Errorf("the click: %d %v", code, m)
	}
	if got := d.keys(); len(got) != 1 || got[0] != "api:4" {
		t.Errorf("sent %q, want api:4", got)
	}

	// The item was resolved meanwhile.
	d.mu.Lock()
	d.open, d.screen = false, permissionScreen(t)
	d.mu.Unlock()
	if code, m := postJSON(t, answer, strings.Replace(body, `"option":3`, `"option":0`, 1), page); code != http.StatusConflict || !strings.Contains(m["error"], "no longer open") || m["screen"] != "" {
		t.Errorf("a click on a resolved item: %d %v", code, m)
	}
	// The page names the item's session: the refusal shows its screen.
	if code, m := postJSON(t, answer, strings.Replace(body, `"option":3`, `"option":0,"session":"api"`, 1), page); code != http.StatusConflict || !strings.Contains(m["screen"], "Do you want to proceed?") {
		t.Errorf("a click on a resolved item: %d %v", code, m)
	}
	if got := d.keys(); len(got) != 1 {
		t.Errorf("a click on a resolved item sent keys: %q", got)
	}
}

// TestDrawerReadOnly: a server without --interactive shows the drawer's
// dialog but offers no answer, and refuses one.
func TestDrawerReadOnly(t *testing.T) {
	f := newFixture(t)
	d := &drawerDaemon{screen: permissionScreen(t), open: true}
	f.setLive([]proto.SessionInfo{{Name: "api", Provider: "claude", State: "running", Attention: 1}}, nil)
	f.srv = f.server(t, func(o *Options) { d.set(o) })
	base := "http://" + listen(t, f.srv)
	st := onceEvent(t, base, map[string]string{"Authorization": "Bearer " + f.srv.o.Token})
	if st.Interactive || len(st.Items) != 1 || st.Items[0].Dialog == nil {
		t.Fatalf("read-only drawer: %+v", st)
	}
	body := `{"option":0,"dialog":"` + st.Items[0].Dialog.Digest + `"}`
	if code, m := postJSON(t, base+"/api/v1/attention/7/answer", body, map[string]string{"Cookie": f.srv.cookie + "=" + f.srv.o.Token, "Origin": base}); code == http.StatusOK {
		t.Errorf("a read-only server answered: %v", m)
	}
	if got := d.keys(); len(got) != 0 {
		t.Errorf("a read-only server sent %q", got)
	}
}

// TestLiveScreensNeedToken: on a read-only loopback server (no token
// needed for the lists), the Live page and its stream show no pane's
// screen without the token, and do with it.
func TestLiveScreensNeedToken(t *testing.T) {
	f := newFixture(t)
	f.setLive([]proto.SessionInfo{{Name: "api", Provider: "claude", State: "running", Attention: 1}}, nil)
	const secretLine = "SCREEN-ONLY-TEXT deploy key hunter2"
	f.srv = f.server(t, func(o *Options) {
		o.Capture = func(ctx context.Context, name string) (string, error) {
			return "$ cat notes\n" + secretLine + "\n", nil
		}
		o.Attention = func(ctx context.Context) ([]proto.AttentionItem, error) {
			return []proto.AttentionItem{{ID: 1, SessionName: "api", Provider: "claude", Reason: "approval-requested", Open: true}}, nil
		}
	})
	base := "http://" + listen(t, f.srv)
	for _, path := range []string{"/live", "/live/events?once"} {
		for name, hdr := range map[string]map[string]string{
			"no token":    nil,
			"wrong token": {"Authorization": "Bearer " + strings.Repeat("B", 26)},
			"cross-site":  {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
		} {
			resp, body := fetch(t, "GET", base+path, hdr)
			if strings.Contains(string(body), "SCREEN-ONLY-TEXT") {
				t.Errorf("%s %s (%s) shows the screen", name, path, resp.Status)
			}
		}
		_, body := fetch(t, "GET", base+path, map[string]string{"Authorization": "Bearer " + f.srv.o.Token})
		if !strings.Contains(string(body), "SCREEN-ONLY-TEXT") {
			t.Errorf("%s with the token lacks the screen", path)
		}
	}
}
