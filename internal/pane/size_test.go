package pane

import (
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/musterhq/muster/internal/proto"
)

// sizes reports the pane's size as the pane, its PTY and its emulator see it.
func sizes(t *testing.T, p *Pane) [3][2]int {
	t.Helper()
	var out [3][2]int
	out[0][0], out[0][1] = p.Size()
	ws, err := pty.GetsizeFull(p.ptmx)
	if err != nil {
		t.Fatal(err)
	}
	out[1] = [2]int{int(ws.Cols), int(ws.Rows)}
	res := make(chan [2]int, 1)
	p.emu.pushFunc(func(term terminal) {
		c, r := term.Size()
		res <- [2]int{c, r}
	})
	select {
	case out[2] = <-res:
	case <-time.After(10 * time.Second):
		t.Fatal("emulator did not answer")
	}
	return out
}

func wantSize(t *testing.T, p *Pane, cols, rows int) {
	t.Helper()
	want := [2]int{cols, rows}
	if got := sizes(t, p); got != [3][2]int{want, want, want} {
		t.Errorf("pane, PTY, emulator sizes = %v, want all %v", got, want)
	}
}

func startSized(t *testing.T, cols, rows int) *Pane {
	t.Helper()
	p, err := Start(Config{Argv: []string{"sleep", "30"}, Cols: cols, Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(time.Second) })
	return p
}

func TestStartClampsSize(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		cols, rows, wantC, wantR int
	}{
		// One side at the limit keeps the test's emulator small.
		{"too wide", 5000, 3, proto.MaxTermSize, 3},
		{"too tall", 3, 100000, 3, proto.MaxTermSize},
		{"unknown", 0, 0, proto.DefaultCols, proto.DefaultRows},
		{"negative", -7, 30, proto.DefaultCols, proto.DefaultRows},
		{"in range", 100, 30, 100, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantSize(t, startSized(t, tc.cols, tc.rows), tc.wantC, tc.wantR)
		})
	}
}

func TestOutOfRangeSizesNeverReachThePane(t *testing.T) {
	p := startSized(t, 90, 20)
	bad := [][2]int{{100000, 100000}, {1001, 20}, {90, 1001}, {0, 0}, {0, 20}, {-1, -1}, {65535, 65535}}
	for _, s := range bad {
		c := p.Attach(s[0], s[1], false)
		// Typing makes a client the leader and applies its size.
		if err := c.Input([]byte{}); err != nil {
			t.Fatal(err)
		}
		c.Resize(s[0], s[1])
		c.Detach()
		p.Resize(s[0], s[1])
	}
	c := p.Attach(90, 20, false)
	defer c.Detach()
	for _, s := range bad {
		c.Resize(s[0], s[1])
	}
	wantSize(t, p, 90, 20)

	// The limits themselves are allowed.
	c.Resize(proto.MaxTermSize, 2)
	wantSize(t, p, proto.MaxTermSize, 2)
	p.Resize(1, 1)
	wantSize(t, p, 1, 1)
}
