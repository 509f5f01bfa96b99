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
	// The slice behind the ring stays within twice the lines kept.
	if cap(h.lines) > 4*h.len()+16 {
		t.Errorf("history slice has %d slots for %d lines", cap(h.lines), h.len())
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
