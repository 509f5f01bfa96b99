package pane

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/emulator"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/poll"
)

func startPolicy(t *testing.T, policy string, argv ...string) *Pane {
	t.Helper()
	if len(argv) == 0 {
		argv = []string{"sleep", "30"}
	}
	p, err := Start(Config{Argv: argv, Cols: 80, Rows: 24, WindowSize: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(time.Second) })
	return p
}

func TestWindowSizePolicies(t *testing.T) {
	t.Run("latest", func(t *testing.T) {
		p := startPolicy(t, WindowLatest)
		a := p.Attach(100, 30, false)
		wantSize(t, p, 100, 30)
		b := p.Attach(70, 20, false)
		wantSize(t, p, 70, 20)
		ro := p.Attach(40, 10, true)
		ro.Resize(30, 8)
		wantSize(t, p, 70, 20)
		a.Input(nil)
		wantSize(t, p, 100, 30)
		b.Input(nil)
		wantSize(t, p, 70, 20)
		// The leader leaves: the client active before it leads again.
		b.Detach()
		wantSize(t, p, 100, 30)
		a.Detach()
		ro.Detach()
		wantSize(t, p, 100, 30)
	})
	t.Run("smallest", func(t *testing.T) {
		p := startPolicy(t, WindowSmallest)
		a := p.Attach(100, 20, false)
		b := p.Attach(70, 40, false)
		ro := p.Attach(20, 5, true)
		defer ro.Detach()
		wantSize(t, p, 70, 20)
		a.Input(nil)
		wantSize(t, p, 70, 20)
		b.Resize(60, 10)
		wantSize(t, p, 60, 10)
		b.Detach()
		wantSize(t, p, 100, 20)
		a.Detach()
	})
	t.Run("largest", func(t *testing.T) {
		p := startPolicy(t, WindowLargest)
		a := p.Attach(100, 20, false)
		b := p.Attach(70, 40, false)
		wantSize(t, p, 100, 40)
		b.Detach()
		wantSize(t, p, 100, 20)
		a.Detach()
	})
	t.Run("unknown policy is latest", func(t *testing.T) {
		p := startPolicy(t, "widest")
		p.Attach(100, 30, false)
		p.Attach(70, 20, false)
		wantSize(t, p, 70, 20)
	})
}

// viewer plays a client's terminal: it feeds every frame into an emulator
// of the client's size and counts frames by type.
type viewer struct {
	mu     sync.Mutex
	term   emulator.Terminal
	counts map[byte]int
}

func watch(t *testing.T, c *Client, cols, rows int) *viewer {
	v := &viewer{term: emulator.New(cols, rows, emulator.Limits{Lines: 100}), counts: map[byte]int{}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done; v.term.Close() })
	go func() {
		buf := make([]byte, 256)
		for {
			if _, err := v.term.Replies().Read(buf); err != nil {
				return
			}
		}
	}()
	go func() {
		defer close(done)
		for {
			frames, ok := c.Next(ctx)
			if !ok {
				return
			}
			v.mu.Lock()
			for _, f := range frames {
				v.counts[f.Type]++
				v.term.Write(f.Data)
			}
			v.mu.Unlock()
			c.Sent()
		}
	}()
	return v
}

func (v *viewer) screen() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.term.Text(0, false)
}

func (v *viewer) count(typ byte) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.counts[typ]
}

// TestClientsOfOtherSizesArePainted: a client smaller or larger than the
// pane is painted from snapshots cut to its size, never with raw output
// (which would wrap at its width); a client of the pane's size gets raw
// output.
func TestClientsOfOtherSizesArePainted(t *testing.T) {
	long := strings.Repeat("A", 70) + "TAIL"
	p := startPolicy(t, WindowLatest, "sh", "-c",
		fmt.Sprintf("read x; i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo line-$i; done; printf '%s\\n'; echo done-$x; sleep 30", long))
	lead := p.Attach(80, 24, false)
	small := p.Attach(40, 10, true)
	big := p.Attach(120, 40, true)
	lv, sv, bv := watch(t, lead, 80, 24), watch(t, small, 40, 10), watch(t, big, 120, 40)
	if err := lead.Input([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	for _, v := range []*viewer{lv, sv, bv} {
		poll.Wait(t, 10*time.Second, func() bool { return strings.Contains(v.screen(), "done-go") },
			func() string { return "the output on every client; screen:\n" + v.screen() })
	}
	if s := sv.screen(); strings.Contains(s, "TAIL") || !strings.Contains(s, strings.Repeat("A", 40)) {
		t.Errorf("the small client shows wrapped output:\n%s", s)
	}
	if lv.count(proto.FrameOutput) == 0 {
		t.Errorf("the client of the pane's size got no raw output")
	}
	for name, v := range map[string]*viewer{"small": sv, "big": bv} {
		if n := v.count(proto.FrameOutput); n != 0 {
			t.Errorf("the %s client got %d raw output frames", name, n)
		}
	}
	pane, _ := p.Capture(t.Context(), 0, false)
	if got := bv.screen(); got != pane {
		t.Errorf("the big client shows\n%s\nthe pane\n%s", got, pane)
	}
}
