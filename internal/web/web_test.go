package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/blob"
	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/proto"
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
	blobs *blob.Store
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
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "muster.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	idx := history.New(st, "test")
	srcs := []transcript.Source{jsonSource{root}}
	if _, err := idx.Refresh(t.Context(), srcs, transcript.Env{}, history.RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{blobs: blob.New(filepath.Join(t.TempDir(), "blobs"))}
	f.srv = New(Options{Index: idx, Sources: srcs, Blobs: f.blobs, Version: "test",
		Live: func(ctx context.Context) ([]proto.SessionInfo, error) { return f.live, f.err }})
	return f
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
		{"history", "/", 200, []string{"Fix &lt;the&gt; login", "Write docs", `href="/session/fake/aaaa-1111"`, "2 of 2 sessions"}, []string{"<the>"}},
		{"search", "/?q=DOCS", 200, []string{"Write docs", "1 of 1 sessions"}, []string{"login"}},
		{"bad provider", "/?provider=nope", 400, []string{"unknown provider"}, nil},
		{"bad limit", "/?limit=-1", 400, nil, nil},
		{"replay", "/session/fake/aaaa-1111", 200, []string{`<details class="thinking">`, "[REDACTED:anthropic-key]", "Fix &lt;the&gt; login"}, []string{"SECRETSECRET"}},
		{"replay unknown", "/session/fake/zzzz", 404, []string{"no such session"}, nil},
		{"replay unknown provider", "/session/nope/aaaa-1111", 404, nil, nil},
		{"history json", "/api/v1/history?q=login", 200, []string{`"id": "aaaa-1111"`}, []string{"bbbb"}},
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
	if rec := f.get(t, "/session/fake/aaaa", nil); rec.Code != 302 || rec.Header().Get("Location") != "/session/fake/aaaa-1111" {
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
	f.err = errors.New("the muster daemon is not running")
	if rec := f.get(t, "/live", nil); !strings.Contains(rec.Body.String(), "No daemon running") {
		t.Errorf("no daemon: %s", rec.Body)
	}
	f.err = nil
	rs := "waitingInput"
	f.live = []proto.SessionInfo{{Name: "api<1>", Provider: "claude", State: "running", RunState: &rs, Attention: 2}}
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
