package emulator

import (
	"strings"
	"testing"
)

func maxLines(term Terminal) int { return term.(*vtTerminal).emu.Scrollback().MaxLines() }

func TestScrollbackCellBudget(t *testing.T) {
	for _, tc := range []struct {
		name             string
		cols, scrollback int
		want             int
	}{
		{"narrow keeps its lines", 80, 10000, 10000},
		{"wide is bounded by cells", 1000, 10000, ScrollbackCells / 1000},
		{"configured lines bound too", 1000, 500, 500},
		{"one column", 1, 1 << 30, ScrollbackCells},
		{"default", 80, 0, 10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term := New(tc.cols, 3, tc.scrollback)
			defer term.Close()
			if got := maxLines(term); got != tc.want {
				t.Errorf("scrollback keeps %d lines, want %d", got, tc.want)
			}
		})
	}
}

func TestScrollbackBudgetFollowsResize(t *testing.T) {
	term := New(100, 3, 5000)
	defer term.Close()
	term.Write([]byte(strings.Repeat("x\r\n", 3000)))
	term.Resize(1000, 3)
	sb := term.(*vtTerminal).emu.ScrollbackLen
	if got, want := sb(), ScrollbackCells/1000; got != want || maxLines(term) != want {
		t.Errorf("after widening, scrollback holds %d of %d lines, want %d", got, maxLines(term), want)
	}
	term.Resize(100, 3)
	if got := maxLines(term); got != 5000 {
		t.Errorf("after narrowing, scrollback keeps %d lines, want the configured 5000", got)
	}
}
