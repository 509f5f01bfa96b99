// Package chromium drives the headless Chromium that page tests load
// replays and the web UI in: finding it, dumping a page's DOM after its
// scripts ran, and taking screenshots. Tests only.
package chromium

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Find returns the browser: MUSTER_CHROMIUM, Debian's chromium package, or
// chromium on PATH. Without one the test fails, unless
// MUSTER_SKIP_BROWSER=1 says to skip it.
func Find(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("a browser test: runs without -short")
	}
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
	t.Fatal("headless chromium not found: install it (apt-get install -y chromium) or set MUSTER_SKIP_BROWSER=1 to skip page tests")
	return ""
}

// args are the flags of every run: headless, no network of its own, a
// fresh profile.
func args(t testing.TB, extra ...string) []string {
	return append([]string{"--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--no-first-run",
		"--disable-sync", "--disable-extensions", "--disable-default-apps", "--no-default-browser-check",
		"--user-data-dir=" + t.TempDir()}, extra...)
}

func run(t testing.TB, bin string, a []string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, a...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", a[len(a)-1], err, stderr.String())
	}
	return out
}

// DumpDOM loads url and returns the DOM after the page's scripts ran for
// budgetMS of virtual time.
func DumpDOM(t testing.TB, bin, url string, budgetMS int) string {
	t.Helper()
	return string(run(t, bin, args(t, "--virtual-time-budget="+itoa(budgetMS), "--dump-dom", url)))
}

// Screenshot loads url in a window of the given size and writes a PNG of
// it to path.
func Screenshot(t testing.TB, bin, url, path string, width, height int) {
	t.Helper()
	run(t, bin, args(t, "--hide-scrollbars", "--virtual-time-budget=2000", "--window-size="+itoa(width)+","+itoa(height), "--screenshot="+path, url))
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("screenshot of %s: no image at %s (%v)", url, path, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
