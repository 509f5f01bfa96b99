package hosts_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/poll"
)

func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestHostAddInstallsByCopyAndListsStates: add copies this muster (and
// its hook helper) into the host user's data dir, checked by SHA-256; a
// second add finds it; a damaged copy is replaced; host ls shows the host
// connected, then unreachable once its sshd is gone, and back after.
func TestHostAddInstallsByCopyAndListsStates(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	out := e.must("host", "add", "h1", "h1")
	if !strings.Contains(out, "connected") || !strings.Contains(out, "copied muster and muster-hook, SHA-256 checked") {
		t.Fatalf("host add said:\n%s", out)
	}
	installed := srv.home + "/.local/share/muster/bin/" + version(e) + "/muster"
	if got, want := fileSum(t, installed), fileSum(t, musterBin); got != want {
		t.Fatalf("installed muster has SHA-256 %s, want %s", got, want)
	}
	cfg, _ := os.ReadFile(e.home + "/config/config.toml")
	if !strings.HasPrefix(string(cfg), "# the test's\n") || !strings.Contains(string(cfg), `muster = "`+installed+`"`) {
		t.Fatalf("config.toml after host add:\n%s", cfg)
	}
	if out := e.must("host", "add", "h1", "h1"); !strings.Contains(out, "found there") {
		t.Fatalf("second host add said:\n%s", out)
	}
	// The host's daemon runs the file: replace it, as a bad copy would.
	os.Remove(installed)
	if err := os.WriteFile(installed, []byte("#!/bin/sh\necho damaged\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out := e.must("host", "add", "h1", "h1"); !strings.Contains(out, "copied muster,") && !strings.Contains(out, "copied muster ") {
		t.Fatalf("host add over a damaged copy said:\n%s", out)
	}
	if got, want := fileSum(t, installed), fileSum(t, musterBin); got != want {
		t.Fatal("the damaged copy was not replaced")
	}

	h := e.hosts()["h1"]
	if h.State != "connected" || h.Version != version(e) || h.Dest != "h1" || h.LastSeen == "" {
		t.Fatalf("host ls: %+v", h)
	}

	srv.stop()
	start := time.Now()
	h = e.hosts()["h1"]
	if h.State != "unreachable" || !strings.Contains(h.Reason, "refused") || h.LastSeen == "" {
		t.Fatalf("host ls with sshd stopped: %+v", h)
	}
	t.Logf("host ls with sshd stopped answered in %v", time.Since(start))
	srv.start()
	poll.Wait(t, 30*time.Second, func() bool { return e.hosts()["h1"].State == "connected" }, func() string { return "h1 never came back" })
}

// TestUnknownHostKeyNeedsAttention: a host whose key is not known is
// never asked about from muster: add reports needs-attention with the
// ssh command to run once by hand, and host ls keeps saying so.
func TestUnknownHostKeyNeedsAttention(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	r := e.run("host", "add", "fresh", "fresh")
	want := "ssh -F " + e.sshConfig + " -o ControlMaster=auto -o ControlPath=" + e.home + "/run/ssh/fresh -o ControlPersist=300 -- fresh true"
	if r.code != 4 || !strings.Contains(r.stderr, "needs-attention") || !strings.Contains(r.stderr, want) {
		t.Fatalf("host add fresh: exit %d\n%s\nwant the command %q", r.code, r.stderr, want)
	}
	h := e.hosts()["fresh"]
	if h.State != "needs-attention" || h.Command != "muster host add fresh fresh" {
		t.Fatalf("host ls: %+v", h)
	}
}
