package early

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

// TestRunsBeforeMain runs this test binary as `… hook event gemini`: the
// init of package early must serve the hook and exit before any test (or
// main) runs.
func TestRunsBeforeMain(t *testing.T) {
	if os.Getenv("MUSTER_EARLY_CHILD") == "1" {
		// Reached only if init did not serve the hook: fail without
		// running the child again.
		t.Fatal("package early did not exit during init")
	}
	dir, err := os.MkdirTemp("", "mhe")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
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

	cmd := exec.Command(os.Args[0], "hook", "event", "gemini")
	cmd.Env = append(os.Environ(),
		"MUSTER_EVENT_SOCKET="+sock, "MUSTER_SURFACE_ID=s1", "MUSTER_EVENT_CAPABILITY=c1",
		"MUSTER_HOOK_FASTPATH=", "MUSTER_EARLY_CHILD=1")
	cmd.Stdin = strings.NewReader(`{"session_id":"g1","hook_event_name":"BeforeAgent","timestamp":"2026-11-30T10:52:06.659Z","prompt":"say hi"}`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v; stderr %q", err, stderr.String())
	}
	if stdout.String() != "{}\n" || stderr.Len() != 0 {
		t.Fatalf("stdout %q stderr %q, want {} and nothing (a test run would print PASS)", stdout.String(), stderr.String())
	}
	if line := <-got; !strings.Contains(line, `"kind":"started"`) || !strings.Contains(line, `"hookName":"BeforeAgent"`) {
		t.Fatalf("sent %q", line)
	}
}
