package emulator

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// hostileSeeds are sequences whose count parameter once drove a loop of
// that many steps in x/vt (issue 22): thirteen bytes of REP held the
// daemon at a full core for 14 s. Every count is now bounded by the
// screen.
var hostileSeeds = []string{
	"A\x1b[999999999b",
	"A\x1b[65535b",
	"\x1b[999999999X",
	"\x1b[999999999I",
	"\x1b[999999999Z",
	"\x1b[999999999@",
	"\x1b[999999999P",
	"\x1b[999999999L",
	"\x1b[999999999M",
	"\x1b[999999999S",
	"\x1b[999999999T",
	"\x1b[10;20r\x1b[999999999S\x1b[999999999T",
	"\x1b[?69h\x1b[5;30s\x1b[999999999@\x1b[999999999P",
	"A\x1b[999999999b\x1b[999999999b\x1b[999999999b\x1b[999999999b",
	// Margins past the screen: the scroll that followed indexed past the
	// buffer and panicked (found by the fuzz target).
	"\x1b[;100r\x1b[T",
	"\x1b[;100r\x1b[99L\x1b[99M\x1b[S",
	"\x1b[?69h\x1b[5;999s\x1b[99@\x1b[99P",
}

// feed writes p to a fresh terminal of cols×rows, draining its replies as
// a pane does, and returns how long the write took.
func feed(cols, rows int, p []byte) time.Duration {
	t := New(cols, rows, Limits{})
	defer t.Close()
	go io.Copy(io.Discard, t.Replies())
	start := time.Now()
	t.Write(p)
	return time.Since(start)
}

// perByteBound is what a write of n bytes may take at most: far above a
// screen's worth of work per sequence (a 200x50 REP is 10,000 cells,
// under a millisecond), far below the seconds an unbounded count took. It
// is generous for the race detector and a loaded machine; what it catches
// is work that grows with a parameter instead of the screen.
func perByteBound(n int) time.Duration {
	return 500*time.Millisecond + time.Duration(n)*2*time.Millisecond
}

func TestCountsAreBoundedByTheScreen(t *testing.T) {
	for _, seed := range hostileSeeds {
		if d := feed(200, 50, []byte(seed)); d > perByteBound(len(seed)) {
			t.Errorf("%q took %v", seed, d)
		}
	}
	// The bound leaves the result right: REP of more than a screenful
	// leaves the screen and cursor as printing every character would.
	for _, n := range []int{29, 30, 31, 997, 1000, 1003} {
		screen := func(p string) string {
			term := New(10, 3, Limits{})
			defer term.Close()
			go io.Copy(io.Discard, term.Replies())
			term.Write([]byte(p + "|"))
			return term.Text(0, false)
		}
		rep, typed := screen(fmt.Sprintf("xA\x1b[%db", n)), screen("x"+strings.Repeat("A", n+1))
		if rep != typed {
			t.Errorf("REP %d:\n%q, printed:\n%q", n, rep, typed)
		}
	}
}

func FuzzEmulatorWorkIsBounded(f *testing.F) {
	for _, s := range hostileSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("\x1b[?1049h\x1b[2J\x1b[H\x1b[31mred\x1b[0m\r\n\x1b]0;title\x07"))
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) > 4096 {
			return
		}
		// A write that never ends would stall the fuzzer instead of
		// failing: the timer crashes the worker, which keeps the input.
		stuck := time.AfterFunc(10*perByteBound(len(p)), func() { panic(fmt.Sprintf("stuck on %q", p)) })
		defer stuck.Stop()
		if d := feed(200, 50, p); d > perByteBound(len(p)) {
			t.Fatalf("%d bytes took %v: %s", len(p), d, fmt.Sprintf("%q", p))
		}
	})
}

// TestPanicInTheEmulatorIsContained: a panic of x/vt on some output (one
// was found by the fuzz target) costs that chunk, not the process: the
// pane's terminal goes on taking output.
func TestPanicInTheEmulatorIsContained(t *testing.T) {
	term := New(80, 24, Limits{})
	defer term.Close()
	go io.Copy(io.Discard, term.Replies())
	term.(*vtTerminal).emu.RegisterCsiHandler('y', func(ansi.Params) bool { panic("a handler's bug") })
	term.Write([]byte("\x1b[5;10r\x1b[y"))
	term.Write([]byte("\x1b[Hstill drawing"))
	if got := term.Text(0, false); !strings.Contains(got, "still drawing") {
		t.Fatalf("after a panic the screen is:\n%s", got)
	}
}
