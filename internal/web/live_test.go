package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
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
