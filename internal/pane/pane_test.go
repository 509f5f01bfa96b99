package pane

import (
	"context"
	"fmt"
	"strings"
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
