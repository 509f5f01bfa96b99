package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/blob"
	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/replay"
	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/transcript"
)

// jsonSource reads "*.json" files holding one transcript.Transcript each.
type jsonSource struct{ root string }

func (s jsonSource) Provider() string                  { return "fake" }
func (s jsonSource) Roots(env transcript.Env) []string { return []string{s.root} }
func (s jsonSource) Discover(ctx context.Context, env transcript.Env) ([]transcript.File, error) {
	ents, err := os.ReadDir(s.root)
	if err != nil {
		return nil, nil
	}
	var out []transcript.File
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, transcript.StatFile(filepath.Join(s.root, e.Name()), fi))
		}
	}
	return out, nil
}
func (s jsonSource) Parse(ctx context.Context, env transcript.Env, path string, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t transcript.Transcript
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	t.Provider, t.Path = "fake", path
	if opts.SummaryOnly {
		t.Items = nil
	}
	return []*transcript.Transcript{&t}, nil
}

type fixture struct {
	srv   *Server
	opts  Options
	blobs *blob.Store
	mu    sync.Mutex
	live  []proto.SessionInfo
	err   error
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	write := func(name string, tr transcript.Transcript) {
		data, _ := json.Marshal(tr)
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	write("a.json", transcript.Transcript{Session: transcript.Session{ID: "aaaa-1111", Title: "Fix <the> login", PromptCount: 1, CWD: "/src/app", StartedAt: t0},
		Items: []transcript.Item{{Kind: transcript.UserPrompt, Text: "Fix <the> login with sk-ant-api03-SECRETSECRETSECRETSECRET01"}, {Kind: transcript.Thinking, Text: "hmm"}}})
	write("b.json", transcript.Transcript{Session: transcript.Session{ID: "bbbb-2222", Title: "Write docs", PromptCount: 2, StartedAt: t0.Add(time.Hour)},
		Items: []transcript.Item{{Kind: transcript.UserPrompt, Text: "docs"}}})
	// c has every secret of the table in its title, first prompt, folder,
	// prompts, tool inputs and outputs; d has them in its first prompt
	// only, so the list shows a title made from it.
	all := strings.Join(secretTexts(), "\n")
	input, _ := json.Marshal(map[string]string{"command": all})
	write("c.json", transcript.Transcript{Session: transcript.Session{ID: "cccc-3333", Title: "deploy with " + secrets[0].text, FirstPrompt: all,
		PromptCount: 1, ToolCallCount: 1, CWD: "/src/" + secrets[3].text, StartedAt: t0.Add(2 * time.Hour)},
		Items: []transcript.Item{{Kind: transcript.UserPrompt, Text: all}, {Kind: transcript.AssistantText, Text: all},
			{Kind: transcript.ToolUse, Tool: "Bash", CallID: "c1", Input: input}, {Kind: transcript.ToolResult, CallID: "c1", Text: all}}})
	for i, sc := range secrets {
		write(fmt.Sprintf("d%d.json", i), transcript.Transcript{Session: transcript.Session{ID: fmt.Sprintf("dddd-%04d", i), FirstPrompt: sc.text, PromptCount: 1, StartedAt: t0.Add(-time.Duration(i+1) * time.Hour)},
			Items: []transcript.Item{{Kind: transcript.UserPrompt, Text: sc.text}}})
	}
	st, err := store.OpenIndex(t.Context(), filepath.Join(t.TempDir(), "muster.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	idx := history.New(st, "test")
	srcs := []transcript.Source{jsonSource{root}}
	if _, err := idx.Refresh(t.Context(), srcs, transcript.Env{}, history.RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{blobs: blob.New(filepath.Join(t.TempDir(), "blobs")), opts: Options{Index: idx, Sources: srcs, Version: "test"}}
	f.opts.Blobs = f.blobs
	f.opts.Live = func(ctx context.Context) ([]proto.SessionInfo, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.live, f.err
	}
	f.srv = f.server(t, func(*Options) {})
	return f
}

// server builds a server over the fixture's index with options changed by
// set.
func (f *fixture) server(t *testing.T, set func(*Options)) *Server {
	t.Helper()
	o := f.opts
	set(&o)
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func (f *fixture) setLive(list []proto.SessionInfo, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live, f.err = list, err
}

func (f *fixture) get(t *testing.T, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "127.0.0.1:7777"
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.srv.Handler().ServeHTTP(rec, req)
	return rec
}

func TestBlobEndpoint(t *testing.T) {
	f := newFixture(t)
	content := []byte("<!DOCTYPE html><html><body>replay</body></html>")
	id, err := f.blobs.Put(content)
	if err != nil {
		t.Fatal(err)
	}
	etag := `"` + blob.Sum(content) + `"`
	tests := []struct {
		name   string
		path   string
		hdr    map[string]string
		status int
		body   string
	}{
		{"ok", "/api/v1/blob/" + id, nil, 200, string(content)},
		{"if-none-match", "/api/v1/blob/" + id, map[string]string{"If-None-Match": etag}, 304, ""},
		{"if-none-match list and weak", "/api/v1/blob/" + id, map[string]string{"If-None-Match": `"x", W/` + etag}, 304, ""},
		{"if-none-match star", "/api/v1/blob/" + id, map[string]string{"If-None-Match": "*"}, 304, ""},
		{"other etag", "/api/v1/blob/" + id, map[string]string{"If-None-Match": `"abc"`}, 200, string(content)},
		{"unknown", "/api/v1/blob/0123456789abcdef", nil, 404, "blob not found\n"},
		{"upper case", "/api/v1/blob/" + strings.ToUpper(id), nil, 400, ""},
		{"short", "/api/v1/blob/abc", nil, 400, ""},
		{"long", "/api/v1/blob/" + id + "0", nil, 400, ""},
		{"non-hex", "/api/v1/blob/zzzzzzzzzzzzzzzz", nil, 400, ""},
		{"encoded traversal", "/api/v1/blob/..%2f..%2fetc%2fpasswd", nil, 400, ""},
		{"foreign host", "/api/v1/blob/" + id, map[string]string{"Host": "evil.example:7777"}, 421, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.get(t, tt.path, tt.hdr)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.body != "" && rec.Body.String() != tt.body {
				t.Errorf("body %q, want %q", rec.Body, tt.body)
			}
			if tt.status == 200 || tt.status == 304 {
				h := rec.Header()
				if h.Get("Cache-Control") != "public, max-age=31536000, immutable" || h.Get("ETag") != etag {
					t.Errorf("headers %v", h)
				}
			}
			if tt.status == 200 {
				h := rec.Header()
				if !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox allow-scripts") || h.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("headers %v", h)
				}
			}
		})
	}

	// A tampered blob is never served.
	p := filepath.Join(f.blobs.Dir(), id)
	os.Chmod(p, 0o644)
	os.WriteFile(p, []byte("tampered"), 0o644)
	if rec := f.get(t, "/api/v1/blob/"+id, nil); rec.Code != 500 || strings.Contains(rec.Body.String(), "tampered") {
		t.Errorf("tampered blob: %d %q", rec.Code, rec.Body)
	}
}

func TestPages(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name    string
		path    string
		status  int
		want    []string
		notWant []string
	}{
		{"history", "/", 200, []string{"Fix &lt;the&gt; login", "Write docs", `href="/session/fake/aaaa-1111"`, fmt.Sprintf("1–%[1]d of %[1]d sessions", 3+len(secrets))}, []string{"<the>"}},
		{"search", "/?q=DOCS", 200, []string{"Write docs", "1–1 of 1 matches for “DOCS”"}, []string{"login"}},
		{"bad provider", "/?provider=nope", 400, []string{"unknown provider"}, nil},
		{"bad limit", "/?limit=-1", 400, nil, nil},
		{"replay", "/session/fake/aaaa-1111", 200, []string{`<details class="thinking">`, "[REDACTED:anthropic-key]", "Fix &lt;the&gt; login"}, []string{"SECRETSECRET"}},
		{"replay unknown", "/session/fake/zzzz", 404, []string{"no such session"}, nil},
		{"replay unknown provider", "/session/nope/aaaa-1111", 404, nil, nil},
		{"history json", "/api/v1/history?q=fix", 200, []string{`"id": "aaaa-1111"`}, []string{"bbbb"}},
		{"history json bad limit", "/api/v1/history?limit=x", 400, []string{`"error": "limit \"x\"`}, nil},
		{"not found", "/nope", 404, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.get(t, tt.path, nil)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			for _, w := range tt.want {
				if !strings.Contains(rec.Body.String(), w) {
					t.Errorf("missing %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(rec.Body.String(), w) {
					t.Errorf("unexpected %q", w)
				}
			}
		})
	}
	if rec := f.get(t, "/session/fake/aaaa-111", nil); rec.Code != 302 || rec.Header().Get("Location") != "/session/fake/aaaa-1111" {
		t.Errorf("prefix: %d %v", rec.Code, rec.Header())
	}
	if rec := f.get(t, "/session/fake/aaaa-1111", nil); !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("replay CSP header: %v", rec.Header())
	}
	if rec := f.get(t, "/", nil); rec.Header().Get("Content-Security-Policy") != uiCSP {
		t.Errorf("UI CSP header: %v", rec.Header())
	}
}

func TestLive(t *testing.T) {
	f := newFixture(t)
	f.setLive(nil, errors.New("the muster daemon is not running"))
	if rec := f.get(t, "/live", nil); !strings.Contains(rec.Body.String(), "No daemon running") {
		t.Errorf("no daemon: %s", rec.Body)
	}
	rs := "waitingInput"
	f.setLive([]proto.SessionInfo{{Name: "api<1>", Provider: "claude", State: "running", RunState: &rs, Attention: 2}}, nil)
	rec := f.get(t, "/live", nil)
	for _, w := range []string{"api&lt;1&gt;", "waitingInput", "claude"} {
		if !strings.Contains(rec.Body.String(), w) {
			t.Errorf("live page misses %q", w)
		}
	}
}

func TestServeRealListener(t *testing.T) {
	f := newFixture(t)
	content := []byte("published replay")
	id, _ := f.blobs.Put(content)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String() + "/api/v1/blob/" + id
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != string(content) || resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Fatalf("GET %s: %d %q %v", url, resp.StatusCode, body, resp.Header)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != 304 {
		t.Errorf("conditional GET: %d", resp2.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("server still answers after shutdown")
	}
}

func TestIsLoopback(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:7777", true}, {"[::1]:80", true}, {"localhost:1", true}, {"127.1.2.3:9", true},
		{"0.0.0.0:7777", false}, {":7777", false}, {"192.168.1.2:80", false}, {"example.com:80", false}, {"nonsense", false},
	}
	for _, tt := range tests {
		if got := IsLoopback(tt.addr); got != tt.want {
			t.Errorf("IsLoopback(%q) = %v", tt.addr, got)
		}
	}
}

// secrets are the credentials the fixture transcripts and live sessions
// hold: leak is the part that must never appear in a response.
var secrets = []struct{ text, leak string }{
	{"password=hunter2hunter2", "hunter2hunter2"},
	{"sk-ant-api03-SECRETSECRETSECRETSECRET01", "SECRETSECRETSECRET"},
	{"ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"},
	{"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"},
	{"mysql -u root -pMyS3cretPw shop", "MyS3cretPw"},
	{"psql --password=PgS3cretPw -h db", "PgS3cretPw"},
	{"curl -H 'Authorization: Bearer BearerS3cretToken0123' https://api", "BearerS3cretToken"},
	{"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAprivkeybody\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEAprivkeybody"},
	{"postgres://app:UrlS3cretPw@db:5432/x", "UrlS3cretPw"},
	{"\x1b[1mGITHUB_TOKEN\x1b[0m=EscS3cretTok", "EscS3cretTok"},
}

func secretTexts() []string {
	var out []string
	for _, sc := range secrets {
		out = append(out, sc.text)
	}
	return out
}

// checkNoSecret fails when a response leaks a secret, in its body or in a
// header.
func checkNoSecret(t *testing.T, what string, resp *http.Response, body []byte) {
	t.Helper()
	var hdr strings.Builder
	resp.Header.Write(&hdr)
	for _, sc := range secrets {
		if bytes.Contains(body, []byte(sc.leak)) || strings.Contains(hdr.String(), sc.leak) {
			t.Errorf("%s: %d: the response shows %q", what, resp.StatusCode, sc.leak)
		}
	}
}

// listen serves srv on a loopback port until the test ends.
func listen(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// fetch sends one request and never follows a redirect.
func fetch(t *testing.T, method, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestRedactionEveryRoute asks every route for pages and answers that
// hold the fixture's secrets, over a real listener, and checks that none
// shows one. A route without requests here fails the test, so a new page
// is checked as soon as it exists.
func TestRedactionEveryRoute(t *testing.T) {
	f := newFixture(t)
	all := strings.Join(secretTexts(), "\n")
	rs := "waitingApproval"
	f.setLive([]proto.SessionInfo{{ID: "s1", Name: "api", Provider: "claude", State: "running", RunState: &rs, CWD: "/src/" + secrets[0].text,
		Command: "claude " + secrets[5].text, Title: all, Reason: secrets[1].text, ActivityEvidence: secrets[2].text, NativeSessionID: "cccc-3333"}}, nil)
	f.srv = f.server(t, func(o *Options) {
		o.Capture = func(ctx context.Context, name string) (string, error) { return "$ " + all + "\n", nil }
		o.Attention = func(ctx context.Context) ([]proto.AttentionItem, error) {
			return []proto.AttentionItem{{SessionName: "api", Reason: "approval-requested", Message: secrets[4].text, Open: true}}, nil
		}
	})
	// A replay published with the defaults.
	c := &transcript.Transcript{Session: transcript.Session{Provider: "fake", ID: "cccc-3333", Title: all},
		Items: []transcript.Item{{Kind: transcript.UserPrompt, Text: all}}}
	page, err := replay.HTML(c, replay.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	blobID, err := f.blobs.Put(page)
	if err != nil {
		t.Fatal(err)
	}

	q := url.QueryEscape
	requests := map[string][]string{
		"GET /{$}": {"/", "/?q=secret", "/?q=" + q("mysql"), "/?provider=fake&limit=5", "/?q=" + q(secrets[0].text),
			"/?provider=" + q(secrets[1].text), "/?since=" + q(secrets[2].text)},
		"GET /session/{provider}/{id}": {"/session/fake/cccc-3333", "/session/fake/cccc", "/session/fake/dddd-0000",
			"/session/fake/" + q(secrets[1].text), "/session/nope/cccc-3333"},
		"GET /live":             {"/live"},
		"GET /live/events":      {"/live/events?once"},
		"GET /stats":            {"/stats?days=3660", "/stats?provider=" + q(secrets[1].text), "/stats?days=" + q(secrets[0].text)},
		"GET /api/v1/blob/{id}": {"/api/v1/blob/" + blobID, "/api/v1/blob/" + q(secrets[2].text)},
		"GET /api/v1/history": {"/api/v1/history", "/api/v1/history?q=secret&limit=100", "/api/v1/history?limit=" + q(secrets[0].text),
			"/api/v1/history?provider=" + q(secrets[1].text)},
		// The terminal's page and stream need the token (term_test.go
		// covers them with it); the assets are constants.
		"GET /assets/{file}":  {"/assets/term.js", "/assets/xterm.js", "/assets/" + q(secrets[0].text)},
		"GET /term/{name}":    {"/term/api", "/term/" + q(secrets[1].text)},
		"GET /term/{name}/ws": {"/term/api/ws"},
	}
	base := "http://" + listen(t, f.srv)
	for _, route := range f.srv.routes {
		paths, ok := requests[route]
		if !ok {
			t.Errorf("route %q has no requests in this test: add some that would show a secret", route)
			continue
		}
		for _, path := range paths {
			resp, body := fetch(t, "GET", base+path, nil)
			if resp.StatusCode >= 500 {
				t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
			}
			checkNoSecret(t, "GET "+path, resp, body)
		}
	}

	// The pages do show the sessions, with the secrets' places marked.
	for path, want := range map[string][]string{
		"/":                       {"deploy with password=[REDACTED:secret]", "psql --password=[REDACTED:secret] -h db", "/src/AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]"},
		"/api/v1/history?q=mysql": {`"id": "cccc-3333"`, "mysql -u root -p[REDACTED:mysql-password] shop"},
		"/session/fake/cccc-3333": {"[REDACTED:private-key]", "postgres://app:[REDACTED:url-password]@db", "Bearer [REDACTED:bearer-token]"},
		"/live":                   {"claude", "waitingApproval", "[REDACTED:anthropic-key]"},
		"/live/events?once":       {"event: live", `"run_state":"waitingApproval"`, "[REDACTED:anthropic-key]"},
	} {
		_, body := fetch(t, "GET", base+path, nil)
		for _, w := range want {
			if !strings.Contains(html.UnescapeString(string(body)), w) {
				t.Errorf("GET %s misses %q", path, w)
			}
		}
	}
}

// publicFixture serves the fixture publicly on a loopback port, so the
// test needs no other address; Addr names it, as `muster serve` does.
func publicFixture(t *testing.T, set func(*Options)) (srv *Server, base, token string) {
	t.Helper()
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	srv = f.server(t, func(o *Options) {
		o.Public, o.Addr, o.Hosts = true, addr, []string{"muster.example"}
		set(o)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != addr || u.Path != "/" {
		t.Fatalf("URL %s: want http://%s/?token=…", srv.URL(), addr)
	}
	return srv, "http://" + addr, u.Query().Get("token")
}

func TestPublicToken(t *testing.T) {
	srv, base, token := publicFixture(t, func(*Options) {})
	if len(token) < 26 {
		t.Fatalf("token %q: want at least 26 base32 digits (128 bits)", token)
	}
	_, _, other := publicFixture(t, func(*Options) {})
	if other == token {
		t.Fatal("two servers made the same token")
	}
	cookieName := "muster_serve_" + base[strings.LastIndexByte(base, ':')+1:]

	refused := []struct {
		name string
		path string
		hdr  map[string]string
	}{
		{"no credential", "/", nil},
		{"no credential api", "/api/v1/history", nil},
		{"no credential blob", "/api/v1/blob/0123456789abcdef", nil},
		{"no credential session", "/session/fake/cccc-3333", nil},
		{"wrong token", "/?token=" + other, nil},
		{"empty token", "/?token=", nil},
		{"token prefix", "/?token=" + token[:len(token)-1], nil},
		{"wrong bearer", "/api/v1/history", map[string]string{"Authorization": "Bearer " + other}},
		{"basic scheme", "/api/v1/history", map[string]string{"Authorization": "Basic " + token}},
		{"wrong cookie", "/", map[string]string{"Cookie": cookieName + "=" + other}},
		{"another server's cookie", "/", map[string]string{"Cookie": "muster_serve_1=" + token}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := fetch(t, "GET", base+tt.path, tt.hdr)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401: %s", resp.StatusCode, body)
			}
			if len(resp.Cookies()) != 0 || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("headers %v", resp.Header)
			}
			checkNoSecret(t, tt.path, resp, body)
		})
	}

	// The right token: a cookie, and the same URL without the token.
	resp, _ := fetch(t, "GET", base+"/session/fake/cccc-3333?token="+token+"&x=1", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/session/fake/cccc-3333?x=1" {
		t.Fatalf("login: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("login set cookies %v", cookies)
	}
	ck := cookies[0]
	if ck.Name != cookieName || ck.Value != token || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" {
		t.Errorf("cookie %s: want %s, HttpOnly, SameSite=Strict, Path=/", ck, cookieName)
	}
	raw := resp.Header.Get("Set-Cookie")
	if !strings.Contains(raw, "HttpOnly") || !strings.Contains(raw, "SameSite=Strict") {
		t.Errorf("Set-Cookie: %s", raw)
	}
	if !strings.Contains(resp.Header.Get("Cache-Control"), "no-store") {
		t.Errorf("the login answer may be cached: %v", resp.Header)
	}
	withCookie := map[string]string{"Cookie": ck.Name + "=" + ck.Value}
	for _, path := range []string{"/", "/session/fake/cccc-3333", "/live", "/api/v1/history"} {
		resp, body := fetch(t, "GET", base+path, withCookie)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the cookie: %d %s", path, resp.StatusCode, body)
		}
		checkNoSecret(t, path, resp, body)
	}
	// API clients send the token itself.
	resp, body := fetch(t, "GET", base+"/api/v1/history?q=cccc", map[string]string{"Authorization": "Bearer " + token})
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"id": "cccc-3333"`)) {
		t.Errorf("bearer: %d %s", resp.StatusCode, body)
	}
	// The token never sends the browser to another host.
	for _, path := range []string{"//evil.example/?token=" + token, "/%2F%2Fevil.example?token=" + token, "/\\evil.example?token=" + token} {
		resp, _ := fetch(t, "GET", base+path, nil)
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") {
			t.Errorf("GET %s: %d Location %q", path, resp.StatusCode, loc)
		}
	}

	// A browser: open the printed URL, land on the history without the
	// token in the address, and stay signed in.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.RawQuery != "" || !bytes.Contains(body, []byte("Write docs")) {
		t.Fatalf("browser: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	checkNoSecret(t, "browser", resp, body)
	resp, err = browser.Get(base + "/live")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("browser, second page: %d", resp.StatusCode)
	}
}

// TestHostCheck: a server answers only to the names of the address it
// listens on (DNS rebinding), before looking at any credential.
func TestHostCheck(t *testing.T) {
	f := newFixture(t)
	loopback := listen(t, f.srv)
	_, port, _ := net.SplitHostPort(loopback)
	tests := []struct {
		host string
		want int
	}{
		{loopback, 200},
		{"localhost:" + port, 200},
		{"LOCALHOST.:" + port, 200},
		{"app.localhost:" + port, 200},
		{"[::1]:" + port, 200},
		{"127.0.0.1", 200},
		{"evil.example:" + port, 421},
		{"127.0.0.1.nip.io:" + port, 421},
		{"localhost.evil.example", 421},
		{"192.168.1.10:" + port, 421},
	}
	for _, tt := range tests {
		resp, body := fetch(t, "GET", "http://"+loopback+"/", map[string]string{"Host": tt.host})
		if resp.StatusCode != tt.want {
			t.Errorf("loopback, Host %q: %d, want %d: %s", tt.host, resp.StatusCode, tt.want, body)
		}
	}
	// --host adds a name, for a proxy or a port forwarder.
	fwd := listen(t, f.server(t, func(o *Options) { o.Hosts = []string{"Muster.Example"} }))
	if resp, _ := fetch(t, "GET", "http://"+fwd+"/", map[string]string{"Host": "muster.example:443"}); resp.StatusCode != 200 {
		t.Errorf("loopback with --host: %d", resp.StatusCode)
	}

	// Public: the bound address, the --host names; even the right token
	// is refused under another name, and no cookie is set.
	_, base, token := publicFixture(t, func(*Options) {})
	addr := strings.TrimPrefix(base, "http://")
	cookie := map[string]string{"Cookie": "muster_serve_" + addr[strings.LastIndexByte(addr, ':')+1:] + "=" + token}
	for _, tt := range []struct {
		host string
		want int
	}{
		{addr, 200}, {"muster.example", 200}, {"MUSTER.example.:8080", 200}, {"localhost:" + port, 200},
		{"evil.example", 421}, {"muster.example.evil.example", 421},
	} {
		hdr := map[string]string{"Host": tt.host}
		maps.Copy(hdr, cookie)
		resp, body := fetch(t, "GET", base+"/", hdr)
		if resp.StatusCode != tt.want {
			t.Errorf("public, Host %q: %d, want %d: %s", tt.host, resp.StatusCode, tt.want, body)
		}
	}
	resp, _ := fetch(t, "GET", base+"/?token="+token, map[string]string{"Host": "evil.example"})
	if resp.StatusCode != 421 || len(resp.Cookies()) != 0 {
		t.Errorf("login under another name: %d %v", resp.StatusCode, resp.Cookies())
	}
}

func TestPublicHosts(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		addr  string
		hosts []string
		ok    []string
		no    []string
	}{
		{"192.0.2.10:7777", nil, []string{"192.0.2.10:7777", "192.0.2.10"}, []string{"localhost:7777", "127.0.0.1:7777", "evil.example", ""}},
		{"[2001:db8::1]:7777", []string{"box.lan"}, []string{"[2001:db8:0::1]:7777", "box.lan"}, []string{"[::1]:7777", "2001:db8::2"}},
		{"0.0.0.0:7777", nil, []string{"localhost:7777", "127.0.0.1:7777"}, []string{"evil.example"}},
		{"127.0.0.1:7777", nil, []string{"localhost:7777"}, []string{"evil.example"}},
	}
	for _, tt := range tests {
		srv := f.server(t, func(o *Options) { o.Public, o.Addr, o.Hosts = true, tt.addr, tt.hosts })
		for _, h := range tt.ok {
			if !srv.hostOK(h) {
				t.Errorf("%s: Host %q refused", tt.addr, h)
			}
		}
		for _, h := range tt.no {
			if srv.hostOK(h) {
				t.Errorf("%s: Host %q accepted", tt.addr, h)
			}
		}
	}
	if host, err := os.Hostname(); err == nil {
		srv := f.server(t, func(o *Options) { o.Public, o.Addr = true, ":7777" })
		if !srv.hostOK(host + ":7777") {
			t.Errorf("listening on every address, the host name %q is refused", host)
		}
		if u := srv.URL(); !strings.Contains(u, ":7777/?token=") || strings.Contains(u, "0.0.0.0") || strings.Contains(u, "[::]") {
			t.Errorf("URL %s", u)
		}
	}
	if _, err := New(Options{Public: true, Token: "short"}); err == nil {
		t.Error("a short token was accepted")
	}
}

// A short prefix of an id redirects nowhere: any web page could otherwise
// make the server load the session "a" finds with an image tag.
func TestShortPrefixIsRefused(t *testing.T) {
	f := newFixture(t)
	for _, prefix := range []string{"a", "aaaa", "aaaa-11"} {
		rec := f.get(t, "/session/fake/"+prefix, nil)
		want := fmt.Sprintf("no session has the id &#34;%s&#34;; a prefix of an id needs at least 8 characters", prefix)
		if rec.Code != 404 || rec.Header().Get("Location") != "" || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("%s: %d %v, want 404 and %q:\n%s", prefix, rec.Code, rec.Header(), want, rec.Body)
		}
	}
}

// Replays load and render a few at a time: a request past maxRenders
// waits for a token (and gives up when its client leaves), then renders.
func TestReplaysRenderAFewAtATime(t *testing.T) {
	f := newFixture(t)
	for range maxRenders {
		f.srv.renders <- struct{}{}
	}
	ctx, cancel := context.WithCancel(t.Context())
	waiting := make(chan struct{})
	f.srv.renderWait = func() { close(waiting) }
	done := make(chan *httptest.ResponseRecorder)
	go func() {
		req := httptest.NewRequestWithContext(ctx, "GET", "/session/fake/aaaa-1111", nil)
		req.Host = "127.0.0.1:7777"
		rec := httptest.NewRecorder()
		f.srv.Handler().ServeHTTP(rec, req)
		done <- rec
	}()
	<-waiting
	f.srv.renderWait = nil
	cancel()
	if rec := <-done; rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "waited for other replays") {
		t.Fatalf("with every render token taken: %d %s, want 503 after waiting", rec.Code, rec.Body)
	}
	<-f.srv.renders
	if rec := f.get(t, "/session/fake/aaaa-1111", nil); rec.Code != 200 {
		t.Fatalf("with a token free: %d", rec.Code)
	}
	if rec := f.get(t, "/session/fake/aaaa-1111", nil); rec.Code != 200 {
		t.Fatalf("the token was not given back: %d", rec.Code)
	}
}
