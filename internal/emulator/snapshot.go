package emulator

import (
	"strconv"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
)

// snapshotDECModes are the DEC private modes a snapshot sets or resets on
// the client, in this order. Origin mode (6) and cursor visibility (25)
// are written separately, where their effect on the cursor is right.
var snapshotDECModes = []int{
	1,    // cursor keys
	5,    // reverse video
	7,    // auto-wrap
	9,    // X10 mouse
	1000, // mouse buttons
	1002, // mouse drag
	1003, // mouse motion
	1004, // focus events
	1005, // UTF-8 mouse
	1006, // SGR mouse
	1015, // urxvt mouse
	1016, // SGR pixel mouse
	2004, // bracketed paste
}

// Snapshot paints a client of cols×rows. Like tmux's redraw of a client, it
// starts from a known state (margins, origin and insert mode off, pen
// reset, screen cleared, so that a larger client has nothing outside the
// pane), paints the part of the screen that fits the client (the part
// with the cursor in it, see viewport), then restores the
// saved cursor, margins, modes, cursor style and position. It is wrapped
// in synchronized output (mode 2026), so that terminals that know it show
// no half-painted frame. The main screen under an alternate-screen
// program is not painted: clients keep one screen, and the pane sends a
// fresh snapshot when the program leaves its alternate screen.
func (t *vtTerminal) Snapshot(cols, rows int) []byte {
	w, h := t.Size()
	if cols <= 0 || rows <= 0 {
		cols, rows = w, h
	}
	var b strings.Builder
	b.Grow(w * h * 2)
	b.WriteString("\x1b[?2026h")
	// Known state: no insert mode or margins would bend the painting.
	b.WriteString("\x1b[?1049l\x1b[4l\x1b[r\x1b[?6l\x1b[0m\x1b(B\x1b[H\x1b[2J")
	if t.emu.IsAltScreen() {
		b.WriteString("\x1b[?1049h\x1b[H\x1b[2J")
	}
	pos := t.emu.CursorPosition()
	ox, oy := viewport(w, h, cols, rows, pos.X, pos.Y)
	t.paint(&b, ox, oy, cols, rows)
	scr := t.screen()
	b.WriteString("\x1b[0m")
	if sv := t.st.saved[scr]; sv != nil && sv.x >= ox && sv.y >= oy && sv.x-ox < cols && sv.y-oy < rows {
		cup(&b, sv.y-oy, sv.x-ox)
		b.WriteString("\x1b7")
	}
	top := 0
	if m := t.st.margins[scr]; m != (margins{}) {
		top = max(0, m.top-oy)
		bottom := min(m.bottom, h) - oy
		bottom = min(bottom, rows)
		if top < bottom-1 {
			b.WriteString("\x1b[" + strconv.Itoa(top+1) + ";" + strconv.Itoa(bottom) + "r")
		} else {
			top = 0
		}
	}
	for _, m := range snapshotDECModes {
		setMode(&b, "?", m, t.st.dec[m])
	}
	setMode(&b, "", 4, t.st.ansi[4])
	setMode(&b, "", 20, t.st.ansi[20])
	if t.st.dec[66] {
		b.WriteString("\x1b=")
	} else {
		b.WriteString("\x1b>")
	}
	b.WriteString("\x1b[=" + strconv.Itoa(t.st.kitty[len(t.st.kitty)-1]) + ";1u")
	b.WriteString("\x1b[>4;" + strconv.Itoa(t.st.modifyOtherKeys) + "m")
	b.WriteString("\x1b[" + strconv.Itoa(t.st.decscusr) + " q")
	if t.title != "" {
		b.WriteString("\x1b]2;" + sanitizeTitle(t.title) + "\x1b\\")
	}
	x, y := min(pos.X-ox, cols-1), min(pos.Y-oy, rows-1)
	if t.st.dec[6] {
		// Origin mode homes the cursor to the top margin, and positions
		// are relative to it from then on.
		b.WriteString("\x1b[?6h")
		cup(&b, max(0, y-top), x)
	} else {
		cup(&b, y, x)
	}
	if t.emu.CursorHidden() {
		b.WriteString("\x1b[?25l")
	} else {
		b.WriteString("\x1b[?25h")
	}
	b.WriteString("\x1b[?2026l")
	return []byte(b.String())
}

// viewport is the top-left cell of the part of a w×h screen that a
// cols×rows client shows: the top-left corner, moved just enough to keep
// the cursor in view (tmux pans a smaller client the same way).
func viewport(w, h, cols, rows, cx, cy int) (ox, oy int) {
	ox = max(0, min(cx-cols+1, w-cols))
	oy = max(0, min(cy-rows+1, h-rows))
	return ox, oy
}

// paint writes the rows of the current screen that the client shows from
// (ox, oy), each cut at the client's width; a wide character cut in half
// becomes a space.
func (t *vtTerminal) paint(b *strings.Builder, ox, oy, cols, rows int) {
	w, h := t.Size()
	w = min(w-ox, cols)
	line := make(uv.Line, w)
	for y := range min(h-oy, rows) {
		blank := true
		for x := range w {
			c := t.emu.CellAt(ox+x, oy+y)
			switch {
			case c == nil || c.IsZero() && x == 0:
				// Nothing, or the right half of a wide character whose
				// left half is outside the view.
				line[x] = uv.EmptyCell
			case x+c.Width > w:
				line[x] = uv.EmptyCell
				line[x].Style = c.Style
			default:
				line[x] = *c
			}
			if !line[x].Equal(&uv.EmptyCell) {
				blank = false
			}
		}
		if blank {
			continue
		}
		cup(b, y, 0)
		b.WriteString(line.Render())
		b.WriteString("\x1b[0m")
	}
}

func cup(b *strings.Builder, y, x int) {
	b.WriteString("\x1b[" + strconv.Itoa(y+1) + ";" + strconv.Itoa(x+1) + "H")
}

func setMode(b *strings.Builder, prefix string, mode int, on bool) {
	b.WriteString("\x1b[" + prefix + strconv.Itoa(mode))
	if on {
		b.WriteByte('h')
	} else {
		b.WriteByte('l')
	}
}
