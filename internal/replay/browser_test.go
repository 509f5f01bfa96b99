package replay

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/musterhq/muster/internal/testing/chromium"
	"github.com/musterhq/muster/internal/transcript"
)

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
	bin := chromium.Find(t)
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

	dom := chromium.DumpDOM(t, bin, srv.URL+"/replay.html#selftest", 3000)
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
	attrs = bodyAttrs(t, chromium.DumpDOM(t, bin, "file://"+file+"#selftest", 3000))
	if attrs["data-selftest"] != "done" || attrs["data-selftest-thinking"] != "ok" || attrs["data-rendered-scenes"] != "3" {
		t.Errorf("from file://: %v", attrs)
	}
}
