package main

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary act as muster-hook when asked to, so the
// tests below run the real main in a process of its own.
func TestMain(m *testing.M) {
	if os.Getenv("MUSTER_HOOK_TEST_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

func runHook(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "MUSTER_HOOK_TEST_MAIN=1"), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("muster-hook %v: %v (it must always exit 0); stderr %q", args, err, errb.String())
	}
	return out.String(), errb.String()
}

func TestSendsTheEvent(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "events.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- ""
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Write([]byte(`{"ok":true,"inserted":true}` + "\n"))
		got <- line
	}()
	stdout, stderr := runHook(t, []string{
		"MUSTER_EVENT_SOCKET=" + sock, "MUSTER_SURFACE_ID=s1", "MUSTER_EVENT_CAPABILITY=c1",
		"XDG_STATE_HOME=" + dir, "MUSTER_HOME=" + dir,
	}, `{"session_id":"g1","hook_event_name":"BeforeAgent","timestamp":"2026-11-30T10:52:06.659Z","prompt":"say hi"}`,
		"event", "gemini")
	if stdout != "{}\n" || stderr != "" {
		t.Fatalf("stdout %q stderr %q, want {} and nothing", stdout, stderr)
	}
	if line := <-got; !strings.Contains(line, `"kind":"started"`) || !strings.Contains(line, `"hookName":"BeforeAgent"`) {
		t.Fatalf("sent %q", line)
	}
}

func TestUsageExitsZero(t *testing.T) {
	for _, args := range [][]string{nil, {"capture"}, {"event"}, {"event", "nosuch"}} {
		_, stderr := runHook(t, nil, "{}", args...)
		if !strings.Contains(stderr, "usage") && !strings.Contains(stderr, "unknown provider") {
			t.Errorf("muster-hook %v: stderr %q, want a usage line", args, stderr)
		}
	}
}
