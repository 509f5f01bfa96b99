package pane

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/poll"
)

func waitCapture(t *testing.T, p *Pane, want string) string {
	t.Helper()
	return poll.Value(t, 10*time.Second,
		func() string { got, _ := p.Capture(t.Context(), 0, false); return got },
		func(got string) bool { return strings.Contains(got, want) },
		func(got string) string { return fmt.Sprintf("the screen to show %q; last screen:\n%s", want, got) })
}

func TestPaneRunsAndCaptures(t *testing.T) {
	p, err := Start(Config{Argv: []string{"sh", "-c", "printf 'hello \\033[31mred\\033[0m\\n'; stty size; exit 3"}, Cols: 100, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(time.Second)
	<-p.Done()
	got := waitCapture(t, p, "hello red")
	if !strings.Contains(got, "30 100") {
		t.Errorf("stty size did not report the pane size:\n%s", got)
	}
	if exited, code := p.Exited(); !exited || code != 3 {
		t.Errorf("Exited() = %v, %d; want true, 3", exited, code)
	}
}

func TestAttachGetsSnapshotThenLiveOutput(t *testing.T) {
	p, err := Start(Config{Argv: []string{"sh", "-c", "echo first; read x; echo got-$x; sleep 5"}, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(time.Second)
	waitCapture(t, p, "first")
	c := p.Attach(80, 24, false)
	defer c.Detach()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	frames, ok := c.Next(ctx)
	if !ok || frames[0].Type != proto.FrameSnapshot || !strings.Contains(string(frames[0].Data), "first") {
		t.Fatalf("first frame is not a snapshot with the screen: %+v", frames)
	}
	if err := c.Input([]byte("abc\r")); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	for !strings.Contains(seen.String(), "got-abc") {
		frames, ok := c.Next(ctx)
		if !ok {
			t.Fatalf("stream ended before the echo; saw %q", seen.String())
		}
		for _, f := range frames {
			seen.Write(f.Data)
		}
	}
}

// TestCloseEndsJobsThatIgnoreHangup: a job of the pane's shell in a process
// group of its own that ignores SIGHUP and holds the terminal must not keep
// Close (and so muster kill and daemon stop) waiting.
func TestCloseEndsJobsThatIgnoreHangup(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "job")
	// set -m: the job gets a process group of its own, as an agent typed
	// at an interactive shell's prompt does.
	script := fmt.Sprintf(`set -m; (trap '' HUP; echo $BASHPID > %[1]s.tmp; mv %[1]s.tmp %[1]s; exec sleep 600) & wait`, marker)
	p, err := Start(Config{Argv: []string{"bash", "-c", script}, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if !poll.Until(10*time.Second, func() bool {
		b, err := os.ReadFile(marker)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}) {
		t.Fatal("the job never started")
	}
	closed := make(chan struct{})
	go func() { p.Close(500 * time.Millisecond); close(closed) }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited on a job that ignores SIGHUP")
	}
	// SIGKILL is delivered at once but acted on when the job next runs,
	// which on a loaded machine is a moment after Close returns.
	gone := func() bool {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return bytes.Contains(b, []byte(") Z ")) || bytes.Contains(b, []byte(") X "))
	}
	if !poll.Until(10*time.Second, gone) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		t.Errorf("job %d outlived Close: %s", pid, b)
	}
}
