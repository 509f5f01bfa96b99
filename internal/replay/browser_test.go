package replay

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// chromium finds the headless browser the page test needs: Debian's
// `chromium` package (/usr/bin/chromium), or MUSTER_CHROMIUM.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("MUSTER_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("MUSTER_SKIP_BROWSER") == "1" {
		t.Skip("MUSTER_SKIP_BROWSER=1 and no chromium")
	}
	t.Fatal("headless chromium not found: install it (apt-get install -y chromium) or set MUSTER_SKIP_BROWSER=1 to skip the replay page test")
	return ""
}

// dumpDOM loads url in headless chromium and returns the DOM after the
// page's scripts ran.
func dumpDOM(t *testing.T, bin, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--no-first-run",
		"--disable-sync", "--disable-extensions", "--disable-default-apps", "--no-default-browser-check",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000", "--dump-dom", url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
	}
	return string(out)
}

func bodyAttrs(t *testing.T, dom string) map[string]string {
	t.Helper()
	m := regexp.MustCompile(`<body([^>]*)>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no <body> in the dumped DOM:\n%.2000s", dom)
	}
	attrs := map[string]string{}
	for _, a := range regexp.MustCompile(`([a-z-]+)="([^"]*)"`).FindAllStringSubmatch(m[1], -1) {
		attrs[a[1]] = strings.ReplaceAll(a[2], "&#39;", "'")
	}
	return attrs
}

func TestReplayInBrowser(t *testing.T) {
	bin := chromium(t)
	var mu sync.Mutex
	var requests []string
	var page []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.URL.Path)
		body := page
		mu.Unlock()
		if r.URL.Path != "/replay.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	}))
	defer srv.Close()

	// Point everything the transcript could make a browser fetch at the
	// recording server: escaped markup, a non-data image, a link.
	tr := loadSample(t)
	tr.Items[0].Text += ` <img src="` + srv.URL + `/leak-img"><link rel="stylesheet" href="` + srv.URL + `/leak-css"><script src="` + srv.URL + `/leak-js"></script>`
	tr.Items[0].Images = append(tr.Items[0].Images, transcript.Image{MIME: "image/png", DataURL: srv.URL + "/leak-image.png"})
	tr.Items = append(tr.Items, transcript.Item{Kind: transcript.AssistantText, Text: `<iframe src="` + srv.URL + `/leak-frame"></iframe>`},
		transcript.Item{Kind: transcript.AssistantText, Text: hostileReply + "\n![leak](" + srv.URL + "/leak-md-img.png)\n"})
	rendered, err := HTML(tr, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	page = rendered
	mu.Unlock()

	dom := dumpDOM(t, bin, srv.URL+"/replay.html#selftest")
	attrs := bodyAttrs(t, dom)
	want := map[string]string{
		"data-ready":              "1",
		"data-scenes":             "3",
		"data-rendered-scenes":    "3",
		"data-selftest":           "done",
		"data-selftest-thinking":  "ok",
		"data-selftest-csp":       CSP,
		"data-selftest-resources": "0",
		"data-selftest-images":    "1",
		"data-selftest-diffs":     "4",
		"data-selftest-terminals": "2",
		"data-selftest-errors":    "1",
		"data-redacted":           "true",
	}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("%s = %q, want %q", k, attrs[k], v)
		}
	}
	// Markdown in a reply: no script scheme survives as a link, no raw
	// HTML as an element, in the DOM the browser built.
	if regexp.MustCompile(`(?i)<a [^>]*href="\s*(javascript|vbscript|data|file):`).MatchString(dom) {
		t.Error("a script-scheme link is live in the browser")
	}
	if n := strings.Count(dom, "<script"); n != 1 {
		t.Errorf("%d <script> elements in the DOM, want only the page's own", n)
	}
	if strings.Contains(dom, "onerror=") || strings.Contains(dom, "onclick=") || strings.Contains(dom, "<iframe") {
		t.Error("raw HTML from a reply became live in the browser")
	}
	mu.Lock()
	got := slices.Clone(requests)
	mu.Unlock()
	if !slices.Equal(got, []string{"/replay.html"}) {
		t.Errorf("the page made requests beyond itself: %v", got)
	}

	// The same page from file:// (no server at all).
	file := filepath.Join(t.TempDir(), "replay.html")
	if err := os.WriteFile(file, rendered, 0o644); err != nil {
		t.Fatal(err)
	}
	attrs = bodyAttrs(t, dumpDOM(t, bin, "file://"+file+"#selftest"))
	if attrs["data-selftest"] != "done" || attrs["data-selftest-thinking"] != "ok" || attrs["data-rendered-scenes"] != "3" {
		t.Errorf("from file://: %v", attrs)
	}
}
