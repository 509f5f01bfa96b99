package emulator

import (
	"fmt"
	"strings"
	"testing"
)

func histLines(term Terminal) int { return term.(*vtTerminal).hist.len() }

func TestHistoryKeepsLinesCompactly(t *testing.T) {
	term := New(80, 5, Limits{Lines: 1000})
	defer term.Close()
	go drain(term)
	for i := range 3000 {
		fmt.Fprintf(writer{term}, "\x1b[3%dmline %d\x1b[0m plain\r\n", i%8, i)
	}
	if got := histLines(term); got != 1000 {
		t.Fatalf("history keeps %d lines, want the configured 1000", got)
	}
	text := term.Text(1000, false)
	if !strings.HasPrefix(text, "line 1996 plain\n") || !strings.Contains(text, "line 2995 plain\nline 2996 plain\n") {
		t.Errorf("history text:\n%.300s", text)
	}
	if colour := term.Text(2, true); !strings.Contains(colour, "\x1b[") {
		t.Errorf("ANSI text lost the colours: %q", colour)
	}
}

func TestHistoryBoundedByBytes(t *testing.T) {
	term := New(200, 3, Limits{Lines: 100000, Bytes: 64 << 10})
	defer term.Close()
	go drain(term)
	line := strings.Repeat("y", 199)
	for range 5000 {
		term.Write([]byte(line + "\r\n"))
	}
	h := term.(*vtTerminal).hist
	if h.bytes.Load() > 64<<10 || h.len() != (64<<10)/(199+lineOverhead) {
		t.Errorf("history holds %d bytes in %d lines, want at most %d bytes", h.bytes.Load(), h.len(), 64<<10)
	}
	// The blocks' slice stays within twice the blocks kept, and the
	// lines are stored compressed: 199 y's compress to a few bytes.
	if cap(h.blocks) > 2*len(h.blocks)+16 {
		t.Errorf("history has %d block slots for %d blocks", cap(h.blocks), len(h.blocks))
	}
	if got := h.stored(); got > int(h.bytes.Load())/4 {
		t.Errorf("history stores %d bytes for %d bytes of lines", got, h.bytes.Load())
	}
	back := h.last(h.len() + 10)
	if len(back) != h.len() || back[0] != line || back[len(back)-1] != line {
		t.Errorf("history reads back %d of its %d lines", len(back), h.len())
	}
}

func TestHistoryBoundedInTotal(t *testing.T) {
	base := TotalScrollbackBytes()
	SetTotalScrollbackBytes(base + 100<<10)
	defer SetTotalScrollbackBytes(0)
	var terms []Terminal
	for range 4 {
		term := New(80, 3, Limits{Lines: 100000, Bytes: 1 << 20})
		go drain(term)
		terms = append(terms, term)
		for i := range 2000 {
			fmt.Fprintf(writer{term}, "%-79d\r\n", i)
		}
	}
	if got := TotalScrollbackBytes() - base; got > 100<<10 {
		t.Errorf("all terminals hold %d bytes of history, over the total bound %d", got, 100<<10)
	}
	for i, term := range terms {
		if n := histLines(term); n < 50 {
			t.Errorf("terminal %d keeps only %d lines of its share", i, n)
		}
	}
	for _, term := range terms {
		term.Close()
	}
	if got := TotalScrollbackBytes(); got != base {
		t.Errorf("closed terminals still count %d bytes", got-base)
	}
}

func TestEraseSavedLinesClearsHistory(t *testing.T) {
	term := New(80, 3, Limits{Lines: 100})
	defer term.Close()
	go drain(term)
	term.Write([]byte("a\r\nb\r\nc\r\nd\r\ne\r\n"))
	if histLines(term) == 0 {
		t.Fatal("no history")
	}
	term.Write([]byte("\x1b[3J"))
	if n := histLines(term); n != 0 {
		t.Errorf("ED 3 left %d lines of history", n)
	}
}

type writer struct{ t Terminal }

func (w writer) Write(p []byte) (int, error) { w.t.Write(p); return len(p), nil }

// TestScrollFastPath checks third_party/x/vt's rotation of rows on a
// full-width scroll against what a terminal does: a scroll region moves
// only its own rows, the row that comes in is blank in the pen's
// background, and several lines at once (CSI n S) keep their order.
func TestScrollFastPath(t *testing.T) {
	term := New(10, 5, Limits{Lines: 100})
	defer term.Close()
	go drain(term)
	vtt := term.(*vtTerminal)
	term.Write([]byte("r0\r\nr1\r\nr2\r\nr3\r\nr4"))
	// Region rows 2-4: a newline at its bottom scrolls r1 out of it and
	// leaves r0 and r4 where they are.
	term.Write([]byte("\x1b[2;4r\x1b[4;1H\n"))
	if got := term.Text(0, false); got != "r0\nr2\nr3\n\nr4\n" {
		t.Errorf("region scroll gave %q", got)
	}
	// Full screen again, a blue pen: the new bottom row is blue blanks.
	term.Write([]byte("\x1b[r\x1b[5;1H\x1b[44m\n\x1b[0m"))
	if c := vtt.emu.CellAt(3, 4); c == nil || c.Style.Bg == nil || c.Content != " " && c.Content != "" {
		t.Errorf("the row scrolled in is %+v, want a blank in the pen's background", c)
	}
	if got := term.Text(0, false); got != "r2\nr3\n\nr4\n" {
		t.Errorf("full scroll gave %q", got)
	}
	term.Write([]byte("\x1b[2J\x1b[H\x1b[3Ja\r\nb\r\nc\r\nd\r\ne\x1b[3S"))
	if got := term.Text(10, false); got != "a\nb\nc\nd\ne\n" {
		t.Errorf("CSI 3 S gave %q, want a b c in the history and d e on screen", got)
	}
	if n := histLines(term); n != 3 {
		t.Errorf("history holds %d lines after CSI 3 S, want 3", n)
	}
}

// TestAltScreenSizedOnUse checks third_party/x/vt's alternate screen, kept
// 1x1 while unused: a program that switches to it gets the full screen,
// also after a resize made while it was off it, and the main screen is
// intact when it leaves.
func TestAltScreenSizedOnUse(t *testing.T) {
	term := New(20, 5, Limits{Lines: 100})
	defer term.Close()
	go drain(term)
	term.Write([]byte("main text"))
	term.Resize(30, 6)
	term.Write([]byte("\x1b[?1049h\x1b[6;21Hcorner"))
	if !term.AltScreen() {
		t.Fatal("not on the alternate screen")
	}
	if got := term.Text(0, false); got != "\n\n\n\n\n                    corner\n" {
		t.Errorf("alternate screen at 30x6: %q", got)
	}
	term.Resize(40, 7)
	term.Write([]byte("\x1b[7;1Hlast row"))
	if got := term.Text(0, false); !strings.HasSuffix(got, "\nlast row\n") || strings.Count(got, "\n") != 7 {
		t.Errorf("alternate screen after a resize to 40x7: %q", got)
	}
	term.Write([]byte("\x1b[?1049l"))
	if got := term.Text(0, false); got != "main text\n" {
		t.Errorf("main screen after leaving: %q", got)
	}
	term.Write([]byte("\x1b[?1049h"))
	if got := term.Text(0, false); got != "" {
		t.Errorf("alternate screen entered again is not blank: %q", got)
	}
	if w, h := term.Size(); w != 40 || h != 7 {
		t.Errorf("size %dx%d, want 40x7", w, h)
	}
}
