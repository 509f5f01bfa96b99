package emulator

import (
	"strings"
	"testing"
)

// replay paints a fresh client terminal of cols×rows with the pane's
// snapshot, as an attaching client's terminal would be painted. The client
// starts with junk on it, which the snapshot must clear.
func replay(t *testing.T, pane Terminal, cols, rows int) *vtTerminal {
	t.Helper()
	client := New(cols, rows, Limits{Lines: 100}).(*vtTerminal)
	t.Cleanup(client.Close)
	go drain(client)
	client.Write([]byte(strings.Repeat("junk ", cols*rows/5)))
	client.Write(pane.Snapshot(cols, rows))
	return client
}

func drain(t Terminal) {
	buf := make([]byte, 1024)
	for {
		if _, err := t.Replies().Read(buf); err != nil {
			return
		}
	}
}

func newPane(t *testing.T, cols, rows int, out string) *vtTerminal {
	t.Helper()
	p := New(cols, rows, Limits{Lines: 100}).(*vtTerminal)
	t.Cleanup(p.Close)
	go drain(p)
	p.Write([]byte(out))
	return p
}

// lines is the screen's text, one entry per row, trailing spaces cut.
func lines(term *vtTerminal) []string {
	_, h := term.Size()
	out := make([]string, h)
	for y := range h {
		var b strings.Builder
		w, _ := term.Size()
		for x := range w {
			if c := term.emu.CellAt(x, y); c != nil {
				b.WriteString(c.Content)
			}
		}
		out[y] = strings.TrimRight(b.String(), " ")
	}
	return out
}

// sameView checks that the client shows the pane's screen cut to the
// client's size, blank beyond it, with the cursor where the pane has it.
func sameView(t *testing.T, pane, client *vtTerminal) {
	t.Helper()
	pl, cl := lines(pane), lines(client)
	cw, ch := client.Size()
	pw, ph := pane.Size()
	pp := pane.emu.CursorPosition()
	ox, oy := viewport(pw, ph, cw, ch, pp.X, pp.Y)
	for y := range cl {
		want := ""
		if y+oy < len(pl) {
			r := []rune(pl[y+oy])
			r = r[min(ox, len(r)):] // columns are runes in the rows that pan

			want = string(r[:min(len(r), cw)])
			want = strings.TrimRight(want, " ")
		}
		if cl[y] != want {
			t.Errorf("row %d: client %q, pane %q", y, cl[y], want)
		}
	}
	if cp := client.emu.CursorPosition(); cp.X != pp.X-ox || cp.Y != pp.Y-oy {
		t.Errorf("cursor at %v on the client, %v on the pane, view from %d,%d", cp, pp, ox, oy)
	}
	if pane.emu.CursorHidden() != client.emu.CursorHidden() {
		t.Errorf("cursor hidden %v on the client, %v on the pane", client.emu.CursorHidden(), pane.emu.CursorHidden())
	}
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("row-")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\r\n")
	}
	return b.String()
}

// TestSnapshotThenContinue paints a client from a snapshot, then feeds the
// same output to pane and client: if margins, origin mode, insert mode,
// auto-wrap or the saved cursor were lost, the screens part.
func TestSnapshotThenContinue(t *testing.T) {
	for _, tc := range []struct {
		name       string
		before     string
		after      string
		cols, rows int
	}{
		{"scroll region", numbered(20) + "\x1b[5;10r\x1b[10;1H", "\nnew-1\r\nnew-2\r\nnew-3\r\n\x1bMrev", 40, 12},
		{"origin mode", numbered(8) + "\x1b[3;8r\x1b[?6h\x1b[2;3H", "X\x1b[1;1HY\x1b[20;1HZ\r\nscrolled", 40, 12},
		{"insert mode", "abcdef\x1b[1;3H\x1b[4h", "XY", 20, 5},
		{"no auto-wrap", "\x1b[?7l", strings.Repeat("w", 30) + "END", 20, 5},
		{"saved cursor", "first\x1b[3;4H\x1b7\x1b[1;1H", "\x1b8saved", 20, 5},
		{"saved cursor, CSI s", "first\x1b[3;4H\x1b[s\x1b[1;1H", "\x1b[usaved", 20, 5},
		{"alternate screen", "main-text\r\n\x1b[?1049hin-vim\x1b[3;2r\x1b[3;1H", "\nmore\nmore\nmore", 30, 6},
		{"hidden cursor", "x\x1b[?25l", "y", 20, 5},
		{"wide characters", "漢字かな\r\n", "ok", 20, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pane := newPane(t, tc.cols, tc.rows, tc.before)
			client := replay(t, pane, tc.cols, tc.rows)
			sameView(t, pane, client)
			pane.Write([]byte(tc.after))
			client.Write([]byte(tc.after))
			sameView(t, pane, client)
		})
	}
}

// TestSnapshotModes: every mode a program set comes back on the client.
func TestSnapshotModes(t *testing.T) {
	pane := newPane(t, 30, 6, "\x1b[?1h\x1b[?1000h\x1b[?1006h\x1b[?2004h\x1b[?1004h\x1b=\x1b[>5u\x1b[>4;2m\x1b[5 q\x1b[4h\x1b[?7l")
	client := replay(t, pane, 30, 6)
	for _, m := range []int{1, 1000, 1006, 2004, 1004, 66} {
		if !client.st.dec[m] {
			t.Errorf("mode ?%d not set on the client", m)
		}
	}
	if client.st.dec[7] {
		t.Errorf("auto-wrap left on")
	}
	if !client.st.ansi[4] {
		t.Errorf("insert mode not set on the client")
	}
	if got := client.st.kitty[len(client.st.kitty)-1]; got != 5 {
		t.Errorf("kitty keyboard flags %d, want 5", got)
	}
	if client.st.modifyOtherKeys != 2 || client.st.decscusr != 5 {
		t.Errorf("modifyOtherKeys %d, cursor style %d; want 2 and 5", client.st.modifyOtherKeys, client.st.decscusr)
	}
	// And modes the program turned off again are turned off on a client
	// that a previous program left them on.
	pane.Write([]byte("\x1b[?1000l\x1b[?2004l\x1b>\x1b[<u\x1b[0 q"))
	client.Write(pane.Snapshot(30, 6))
	if client.st.dec[1000] || client.st.dec[2004] || client.st.dec[66] || client.st.kitty[len(client.st.kitty)-1] != 0 || client.st.decscusr != 0 {
		t.Errorf("modes left on: %+v", client.st)
	}
}

// TestSnapshotOtherSizes: a smaller client sees the pane's top-left corner,
// or the part with the cursor, with no wrapped garbage; a larger one sees
// the pane with the rest cleared.
func TestSnapshotOtherSizes(t *testing.T) {
	out := numbered(30) + strings.Repeat("0123456789", 8) + "\r\n漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字\x1b[5;2H"
	pane := newPane(t, 80, 24, out)
	for _, size := range [][2]int{{40, 10}, {41, 10}, {10, 3}, {120, 40}, {80, 50}, {200, 24}} {
		client := replay(t, pane, size[0], size[1])
		sameView(t, pane, client)
		if size[0] < 80 || size[1] < 24 {
			pos := client.emu.CursorPosition()
			if pos.X >= size[0] || pos.Y >= size[1] {
				t.Errorf("%v: cursor %v outside the client", size, pos)
			}
		}
	}
}

// TestSnapshotPansToTheCursor: a client too small for the cursor's row or
// column sees the part of the screen around it.
func TestSnapshotPansToTheCursor(t *testing.T) {
	pane := newPane(t, 80, 24, numbered(40)+strings.Repeat("0123456789", 7))
	for _, size := range [][2]int{{40, 10}, {30, 5}, {80, 3}} {
		client := replay(t, pane, size[0], size[1])
		sameView(t, pane, client)
		if l := lines(client); !strings.HasSuffix(l[len(l)-1], "6789") {
			t.Errorf("%v: the cursor's row is not shown:\n%s", size, strings.Join(l, "\n"))
		}
	}
}
