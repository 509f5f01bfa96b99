package web

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/chromium"
)

// TestPagesInBrowser loads every page of the UI from a real listener in
// headless Chromium, checks what the browser built (the Live page's
// stream updated it; no secret, no blocked resource), and leaves a
// screenshot of each in the test's artifact directory (go test
// -artifacts keeps them).
func TestPagesInBrowser(t *testing.T) {
	bin := chromium.Find(t)
	f := newFixture(t)
	rs, limited, resets := "waitingApproval", string(proto.StateLimited), "2026-03-01T15:04:00Z"
	f.setLive([]proto.SessionInfo{
		{Name: "api", Provider: "fake", State: "running", RunState: &rs, Attention: 1, NativeSessionID: "aaaa-1111", CWD: "/src/app", Title: "claude: fix login"},
		{Name: "docs", Provider: "fake", State: "exited"},
		{Name: "capped", Provider: "fake", State: "running", RunState: &limited, LimitResetsAt: &resets, ContinueAfterLimit: true,
			Worktree: &proto.WorktreeInfo{Path: "/src/app-capped", Branch: "muster/capped", Exists: true, Dirty: 1, Ahead: 4}},
	}, nil)
	f.srv = f.server(t, func(o *Options) {
		o.LiveInterval = 100 * time.Millisecond
		o.External = func(context.Context, []proto.SessionInfo) ([]proto.SessionInfo, error) {
			return []proto.SessionInfo{backgroundAgent("bg-fix", "/src/bg")}, nil
		}
		o.Now = func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
		o.Location = time.UTC
		o.Capture = func(ctx context.Context, name string) (string, error) {
			return "╭──────────────╮\n│ > fix login  │\n╰──────────────╯\n  token " + secrets[1].text + "\n", nil
		}
		o.Attention = func(ctx context.Context) ([]proto.AttentionItem, error) {
			return []proto.AttentionItem{{SessionName: "api", Reason: "approval-requested", Message: "Bash: rm -rf build", Open: true}}, nil
		}
	})
	base := "http://" + listen(t, f.srv)
	dir := t.ArtifactDir()
	pages := []struct {
		name, path string
		want       []string
	}{
		{"history", "/", []string{`<table id="history">`, "Fix &lt;the&gt; login"}},
		{"search", "/?q=docs", []string{"<mark>", "Write docs"}},
		{"stats", "/stats?days=3660", []string{"<svg", "Tools used"}},
		{"live", "/live?token=" + f.srv.o.Token + "#once", []string{`data-stream="open"`, `data-name="api"`, "approval-requested: Bash: rm -rf build", `href="/session/fake/aaaa-1111"`, "│ &gt; fix login  │", "[REDACTED:anthropic-key]",
			`<span class="resets">resets 15:04</span><span class="cont">muster continues it then</span><span class="branch" title="worktree /src/app-capped on muster/capped, 1 changed file, 4 commits since its base">⎇ muster/capped* ↑4</span>`,
			`<section class="pane ext" data-name="bg-fix"><div class="pane-head"><b>bg-fix</b><span class="prov">fake</span><span class="state external">↗ external idle</span><span class="act">working</span>`,
			`<div class="pane-meta by">run by fake agents, not muster; open it in a pane: <code>muster new fake --cmd 'claude attach 0b6ecd0a'</code></div>`}},
		{"session", "/session/fake/aaaa-1111", []string{`<nav class="site">`, `<details class="thinking">`, `data-ready="1"`}},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			dom := chromium.DumpDOM(t, bin, base+p.path, 3000)
			for _, w := range p.want {
				if !strings.Contains(dom, w) {
					t.Errorf("the browser's DOM of %s lacks %q", p.path, w)
				}
			}
			for _, s := range secrets {
				if strings.Contains(dom, s.leak) {
					t.Errorf("%s shows a secret in the browser: %q", p.path, s.leak)
				}
			}
			if p.name == "live" {
				// The snapshot came with the page; the stream replaced it.
				if m := regexp.MustCompile(`data-updates="(\d+)"`).FindStringSubmatch(dom); m == nil || m[1] == "0" {
					t.Errorf("the Live page was never updated by its event stream")
				}
			}
			chromium.Screenshot(t, bin, base+p.path, filepath.Join(dir, p.name+".png"), 1280, 900)
		})
	}
}

// TestLiveHostsInBrowser: the Live page's script, fed by the stream,
// draws each host's state and its sessions as the page's snapshot does:
// a live host's session with its terminal, a down host's dimmed with
// since when, and no terminal.
func TestLiveHostsInBrowser(t *testing.T) {
	bin := chromium.Find(t)
	f := newFixture(t)
	// The hosts are pushed before this machine's daemon answers, so the
	// page's one event (#once) carries both.
	hostsIn := make(chan struct{})
	rs := "running"
	f.srv = f.server(t, func(o *Options) {
		o.Watch = func(ctx context.Context, push func(proto.WatchUpdate)) error {
			select {
			case <-hostsIn:
			case <-ctx.Done():
				return ctx.Err()
			}
			push(proto.WatchUpdate{Sessions: []proto.SessionInfo{{Name: "api", Provider: "fake", State: "running", RunState: &rs}}, Attention: []proto.AttentionItem{}})
			<-ctx.Done()
			return ctx.Err()
		}
		o.Remote = &browserRemote{hostsIn: hostsIn, hosts: []HostState{
			{Name: "h1", State: "connected", Connected: true, Sessions: []proto.SessionInfo{{Name: "h1:x", Provider: "fake", State: "running", RunState: &rs}}},
			{Name: "h2", State: "unreachable", Reason: "Connection refused", LastSeen: time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC),
				Sessions: []proto.SessionInfo{{Name: "h2:y", Provider: "fake", State: "running", RunState: &rs}}},
		}}
		o.Now = func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
		o.Location = time.UTC
	})
	base := "http://" + listen(t, f.srv)
	dom := chromium.DumpDOM(t, bin, base+"/live?token="+f.srv.o.Token+"#once", 3000)
	for _, w := range []string{
		`<div class="hoststate up" data-host="h1"><b>h1</b> <span class="hstate">connected</span></div>`,
		`<div class="hoststate down" data-host="h2"><b>h2</b> <span class="hstate">unreachable</span> <span class="hnote">Connection refused; last seen 11:00</span></div>`,
		`<section class="pane remote" data-name="h1:x" data-host="h1">`,
		`<a class="term" href="/term/h1%3Ax">terminal →</a>`,
		`<section class="pane remote down" data-name="h2:y" data-host="h2">`,
		`<div class="pane-meta down">h2 unreachable; last seen 11:00</div>`,
	} {
		if !strings.Contains(dom, w) {
			t.Errorf("the browser's DOM lacks %q", w)
		}
	}
	if strings.Contains(dom, "/term/h2") {
		t.Error("the browser offers the terminal of a session on a host that is down")
	}
	if m := regexp.MustCompile(`data-updates="(\d+)"`).FindStringSubmatch(dom); m == nil || m[1] == "0" {
		t.Errorf("the Live page was never updated by its event stream")
	}
	chromium.Screenshot(t, bin, base+"/live?token="+f.srv.o.Token+"#once", filepath.Join(t.ArtifactDir(), "live-hosts.png"), 1280, 900)
}

// browserRemote pushes its hosts once, then lets the daemon's watch
// answer.
type browserRemote struct {
	hostsIn chan struct{}
	hosts   []HostState
	once    sync.Once
}

func (r *browserRemote) Follow(ctx context.Context, push func([]HostState)) {
	push(r.hosts)
	r.once.Do(func() { close(r.hostsIn) })
	<-ctx.Done()
}

func (r *browserRemote) Preview(ctx context.Context, name string, push func(proto.PreviewScreen)) error {
	<-ctx.Done()
	return nil
}

func (r *browserRemote) HostItem(int64) bool { return false }

func (r *browserRemote) Attention(context.Context, int64) ([]proto.AttentionItem, error) {
	return nil, nil
}
