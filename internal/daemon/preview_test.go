package daemon

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/proto"
)

// TestPreview: a preview stream sends the pane's screen at once, pushes it
// again when the program prints, and ends with an exited screen when the
// session is killed; an unknown session is refused.
func TestPreview(t *testing.T) {
	d := startDaemon(t)
	c := d.dial()
	c.must("new", proto.NewArgs{Name: "cat", Dir: t.TempDir(), Cmd: "cat", Cols: 60, Rows: 12}, nil)
	// A refused stream ends its connection, as a refused attach does.
	d.dial().wantCode(proto.CodeNotFound, proto.OpPreview, proto.PreviewArgs{Name: "nosuch"})

	pc, err := client.Dial(t.Context(), d.dirs, "test-client")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var first proto.PreviewScreen
	if err := pc.Open(t.Context(), proto.OpPreview, proto.PreviewArgs{Name: "cat"}, &first); err != nil {
		t.Fatal(err)
	}
	if first.Name != "cat" || first.Cols != 60 || first.Rows != 12 || first.Exited || first.SurfaceID == "" {
		t.Errorf("first screen = %+v", first)
	}
	if err := pc.Call(t.Context(), proto.OpList, nil, nil); err == nil {
		t.Error("a stream connection carried another call")
	}
	pc.Conn().SetReadDeadline(time.Now().Add(20 * time.Second))
	recv := func() proto.PreviewScreen {
		t.Helper()
		var sc proto.PreviewScreen
		if err := pc.Recv(&sc); err != nil {
			t.Fatalf("recv: %v", err)
		}
		return sc
	}

	c.must("send", proto.SendArgs{Name: "cat", Text: "\x1b[31mred-line\x1b[0m", Enter: true}, nil)
	// The terminal echoes the escape as ^[; cat's output is the red line.
	var sc proto.PreviewScreen
	red := func() bool {
		for _, l := range sc.Lines {
			if ansi.Strip(l) == "red-line" && strings.Contains(l, "\x1b[31m") {
				return true
			}
		}
		return false
	}
	for !red() {
		sc = recv()
		if sc.Exited {
			t.Fatalf("stream ended early: %+v", sc)
		}
	}

	c.must("kill", proto.Target{Name: "cat"}, nil)
	for !sc.Exited {
		sc = recv()
	}
	if sc.ExitCode == nil {
		t.Errorf("exited screen without an exit code: %+v", sc)
	}
	if err := pc.Recv(&sc); !errors.Is(err, io.EOF) {
		t.Errorf("after the exited screen: %v, want EOF", err)
	}
}
