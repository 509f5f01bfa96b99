package core_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/vt"
)

// rows is a screen's text as rows with trailing spaces cut and trailing
// blank rows dropped, as `muster capture` prints it.
func rows(screen string) []string {
	ls := strings.Split(screen, "\n")
	for i := range ls {
		ls[i] = strings.TrimRight(ls[i], " ")
		if strings.Contains(ls[i], " muster: attached to ") {
			ls[i] = "" // the first attach's hint, over the bottom row
		}
	}
	for len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// view is what a cols×rows client should show of a pane screen whose
// view starts at row oy: its rows cut at cols.
func view(pane []string, oy, cols, nrows int) []string {
	var out []string
	for y := oy; y < len(pane) && y < oy+nrows; y++ {
		r := []rune(pane[y])
		out = append(out, strings.TrimRight(string(r[:min(len(r), cols)]), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// waitSame polls until the client shows want (rows as `rows` gives them).
func (c *ptyClient) waitSame(what string, want func() []string) {
	c.t.Helper()
	var got, w []string
	if !eventually(func() bool {
		got, w = rows(c.screen()), want()
		return strings.Join(got, "\n") == strings.Join(w, "\n")
	}) {
		c.t.Fatalf("%s: the client shows\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
}

func (e *env) captureRows(name string) []string {
	return rows(e.must("capture", name))
}

// TestReattachToVimThenQuit: attaching to a pane where vim runs, then
// quitting vim, shows the shell's screen vim was started from, with the
// cursor where the shell has it.
func TestReattachToVimThenQuit(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "v", "--detach", "--cmd", "bash --norc --noprofile")
	e.must("send", "v", "seq 1 5; echo shell-screen-here", "--enter")
	e.waitScreen("v", "shell-screen-here")
	e.must("send", "v", "vim -u NONE -N", "--enter")
	e.waitScreen("v", "~")
	c := e.attach("v", 100, 30, true)
	c.waitScreen("~")
	c.typeText("\x1b:q\r")
	// The pane first, then the client: compared at once, both could still
	// show vim, before the keys reached it.
	if !eventually(func() bool {
		s := e.must("capture", "v")
		// The shell's next prompt, below the vim command line: until it is
		// printed, the cursor sits on an empty row the capture trims.
		return strings.Contains(s, "shell-screen-here") && !strings.Contains(s, "~\n~") &&
			strings.Contains(s, "vim -u NONE -N\nbash-")
	}) {
		t.Fatalf("vim did not quit:\n%s", e.must("capture", "v"))
	}
	c.waitSame("after quitting vim", func() []string { return e.captureRows("v") })
	screen := c.screen()
	if !strings.Contains(screen, "shell-screen-here") || strings.Contains(screen, "~\n~") {
		t.Fatalf("quitting vim did not bring back the shell's screen:\n%s", screen)
	}
	var pos struct{ X, Y int }
	c.locked(func(emu *vt.SafeEmulator) { p := emu.CursorPosition(); pos.X, pos.Y = p.X, p.Y })
	if want := len(e.captureRows("v")) - 1; pos.Y != want {
		t.Errorf("cursor on row %d, want the prompt's row %d:\n%s", pos.Y, want, screen)
	}
	c.detach()
}

// TestReattachKeepsScrollRegion: a program that set a scroll region keeps
// scrolling inside it after a re-attach, on the client as in the pane.
func TestReattachKeepsScrollRegion(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "sr", "--detach", "--cmd", e.script(
		`stty -echo; seq 1 20; printf '\033[5;10r\033[10;1H'; read x; for i in 1 2 3 4 5 6 7 8; do printf '\nregion-%s' $i; done; printf '\033[?6h\033[1;1Horigin'; sleep 60`))
	e.waitScreen("sr", "20")
	c := e.attach("sr", 80, 24, true)
	c.waitSame("the snapshot", func() []string { return e.captureRows("sr") })
	e.must("send", "sr", "go", "--enter")
	e.waitScreen("sr", "origin")
	c.waitSame("after scrolling in the region", func() []string { return e.captureRows("sr") })
	screen := c.screen()
	for _, want := range []string{"\n1\n", "\n4\n", "region-8", "\n15\n"} {
		if !strings.Contains("\n"+screen+"\n", want) {
			t.Errorf("the client lacks %q:\n%s", want, screen)
		}
	}
	c.detach()
}

// TestClientsOfDifferentSizesWithVim: two writable clients of different
// sizes and a small read-only viewer on vim. The pane takes the size of the
// client that typed last; the larger client shows the pane in its corner
// with nothing else, the smaller one the pane cut to its size (no wrapped
// lines), and the viewer sees the screen.
func TestClientsOfDifferentSizesWithVim(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "numbered line %03d %s\n", i, strings.Repeat("=", 70))
	}
	file := filepath.Join(dir, "lines.txt")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	e.must("new", "--name", "vim", "--detach", "--cmd", "vim -u NONE -N "+file)
	e.waitScreen("vim", "numbered line 001")
	big := e.attach("vim", 120, 40, true)
	big.waitScreen("numbered line 039")
	small := e.attach("vim", 70, 20, true)
	small.typeText("3G")
	// The small client typed last: the pane is 70×20.
	small.waitSame("the small leader", func() []string { return e.captureRows("vim") })
	big.waitSame("the big client while the small one leads", func() []string { return e.captureRows("vim") })
	if got := len(rows(big.screen())); got > 20 {
		t.Errorf("the big client shows %d rows of a 20-row pane:\n%s", got, big.screen())
	}
	viewer := e.ptyRun(40, 10, true, "attach", "--read-only", "vim")
	viewer.waitScreen("numbered line 0")

	// The big client types: the pane is 120×40, the small client shows
	// its corner, the viewer still sees the screen.
	big.typeText("5G")
	// The pane first: until it takes the big client's size, the client
	// and the capture agree on the small screen.
	if !eventually(func() bool { return len(e.captureRows("vim")) > 20 }) {
		t.Fatalf("the pane did not take the big client's size:\n%s", e.must("capture", "vim"))
	}
	big.waitSame("the big leader", func() []string { return e.captureRows("vim") })
	if !strings.Contains(big.screen(), "numbered line 039") {
		t.Errorf("the big client does not show all 40 rows:\n%s", big.screen())
	}
	small.waitSame("the small client under a big leader", func() []string { return view(e.captureRows("vim"), 0, 70, 20) })
	viewer.waitSame("the read-only viewer", func() []string { return view(e.captureRows("vim"), 0, 40, 10) })
	for _, c := range []*ptyClient{big, small, viewer} {
		c.detach()
	}
}
