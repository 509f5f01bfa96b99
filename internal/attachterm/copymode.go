package attachterm

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// CopyMode is the attached side's view of a pane's history and screen:
// the text `muster capture --scrollback` gives, shown on the user's
// terminal instead of the pane, with vi and emacs movement, search with
// highlight, a selection copied to the user's clipboard with OSC 52, and
// the whole text opened in $PAGER or $EDITOR. It runs on the goroutine
// that reads the user's keys; the pane's output is not drawn meanwhile.
type CopyMode struct {
	w          io.Writer
	lines      [][]rune
	cols, rows int
	top        int // first line shown
	cx, cy     int // cursor: column (rune) and line
	selecting  bool
	ax, ay     int // selection anchor
	query      string
	backward   bool
	prompt     []rune // a search being typed, when inPrompt
	inPrompt   bool
	promptBack bool
	message    string
	// Open shows file, the whole text, in the user's pager (or, with
	// editor, their editor) on the user's terminal and returns once it
	// is done; nil: o and e do nothing.
	Open func(file string, editor bool) error
	// TempDir is where the file Open shows is written ("": os.TempDir).
	TempDir string
	done    bool
	copied  string // what the last copy sent, for the caller
	// FromWheel is set when the wheel opened copy mode: scrolling back
	// down to the bottom then leaves it, as tmux's wheel binding does.
	FromWheel bool
}

// wheelLines is how far one wheel notch scrolls.
const wheelLines = 3

// Wheel scrolls the view (and the cursor with it) by one notch.
func (m *CopyMode) Wheel(w Wheel) {
	m.message = ""
	switch w {
	case WheelUp:
		m.moveTo(m.cx, m.cy-wheelLines)
	case WheelDown:
		if m.FromWheel && !m.selecting && m.cy >= len(m.lines)-1 {
			m.done = true
			return
		}
		m.moveTo(m.cx, m.cy+wheelLines)
	}
}

// NewCopyMode shows text, the pane's history and screen, on w, a terminal
// of cols by rows.
func NewCopyMode(w io.Writer, text string, cols, rows int) *CopyMode {
	text = strings.TrimRight(text, "\n")
	m := &CopyMode{w: w, cols: cols, rows: max(rows, 2)}
	for _, l := range strings.Split(text, "\n") {
		m.lines = append(m.lines, []rune(strings.TrimRight(l, " ")))
	}
	// Start where the user was: the last line, at the bottom.
	m.cy = len(m.lines) - 1
	m.top = max(0, len(m.lines)-m.view())
	m.message = "copy mode: vi/emacs keys, / ? search, v select, y copy, o pager, e editor, q quit"
	return m
}

func (m *CopyMode) view() int { return m.rows - 1 }

// Over reports whether copy mode has ended.
func (m *CopyMode) Over() bool { return m.done }

// Feed handles a chunk of the user's input. Once copy mode is over it
// returns true and the input it did not read, which is for the pane.
func (m *CopyMode) Feed(p []byte) (over bool, rest []byte) {
	for len(p) > 0 && !m.done {
		k, n := nextKey(p)
		p = p[n:]
		m.key(k)
	}
	if !m.done {
		m.Draw()
	}
	return m.done, p
}

// nextKey decodes one key: a CSI or SS3 cursor key, Alt plus a key (ESC
// then the key), a lone ESC, or one character.
func nextKey(p []byte) (string, int) {
	if p[0] == 0x1b {
		if len(p) == 1 {
			return "esc", 1
		}
		if len(p) > 2 && p[1] == '[' && p[2] == '<' {
			// A mouse report of the program's (SGR): not a key.
			i := 3
			for i < len(p) && p[i] != 'M' && p[i] != 'm' {
				i++
			}
			return "", min(i+1, len(p))
		}
		if p[1] == '[' || p[1] == 'O' {
			i := 2
			for i < len(p) && (p[i] >= '0' && p[i] <= '9' || p[i] == ';') {
				i++
			}
			if i < len(p) {
				seq := string(p[2:i]) + string(p[i])
				names := map[string]string{"A": "up", "B": "down", "C": "right", "D": "left", "H": "home", "F": "end", "5~": "pgup", "6~": "pgdn", "1~": "home", "4~": "end"}
				if name, ok := names[seq]; ok {
					return name, i + 1
				}
				return "", i + 1
			}
			return "", len(p)
		}
		r, size := utf8.DecodeRune(p[1:])
		return "M-" + string(r), 1 + size
	}
	if p[0] < 0x20 || p[0] == 0x7f {
		switch p[0] {
		case '\r', '\n':
			return "enter", 1
		case 0x7f, 0x08:
			return "bspace", 1
		case 0:
			return "C-space", 1
		}
		return "C-" + string(rune(p[0]+'a'-1)), 1
	}
	r, size := utf8.DecodeRune(p)
	return string(r), size
}

func (m *CopyMode) key(k string) {
	m.message = ""
	if m.inPrompt {
		switch k {
		case "enter":
			m.inPrompt = false
			if len(m.prompt) > 0 {
				m.query, m.backward = string(m.prompt), m.promptBack
			}
			m.search(m.backward)
		case "esc", "C-g", "C-c":
			m.inPrompt = false
		case "bspace":
			if len(m.prompt) > 0 {
				m.prompt = m.prompt[:len(m.prompt)-1]
			}
		default:
			if utf8.RuneCountInString(k) == 1 && k[0] >= 0x20 {
				m.prompt = append(m.prompt, []rune(k)...)
			}
		}
		return
	}
	half := max(1, m.view()/2)
	switch k {
	case "q", "esc", "C-c", "C-g":
		m.done = true
	case "j", "down", "C-n":
		m.moveTo(m.cx, m.cy+1)
	case "k", "up", "C-p":
		m.moveTo(m.cx, m.cy-1)
	case "h", "left", "C-b":
		m.moveTo(m.cx-1, m.cy)
	case "l", "right", "C-f":
		m.moveTo(m.cx+1, m.cy)
	case "0", "home", "C-a":
		m.moveTo(0, m.cy)
	case "$", "end", "C-e":
		m.moveTo(len(m.line(m.cy))-1, m.cy)
	case "g", "M-<":
		m.moveTo(0, 0)
	case "G", "M->":
		m.moveTo(0, len(m.lines)-1)
	case "C-d":
		m.moveTo(m.cx, m.cy+half)
	case "C-u":
		m.moveTo(m.cx, m.cy-half)
	case "pgdn", "C-v":
		m.moveTo(m.cx, m.cy+m.view())
	case "pgup", "M-v":
		m.moveTo(m.cx, m.cy-m.view())
	case "/", "C-s":
		m.inPrompt, m.promptBack, m.prompt = true, false, nil
	case "?", "C-r":
		m.inPrompt, m.promptBack, m.prompt = true, true, nil
	case "n":
		m.search(m.backward)
	case "N":
		m.search(!m.backward)
	case "v", " ", "C-space":
		m.selecting = !m.selecting
		m.ax, m.ay = m.cx, m.cy
	case "y", "enter", "M-w":
		m.copy()
		m.done = true
	case "o":
		m.open(false)
	case "e":
		m.open(true)
	}
}

func (m *CopyMode) line(y int) []rune {
	if y < 0 || y >= len(m.lines) {
		return nil
	}
	return m.lines[y]
}

// moveTo puts the cursor at x, y within the text and scrolls to show it.
func (m *CopyMode) moveTo(x, y int) {
	m.cy = max(0, min(y, len(m.lines)-1))
	m.cx = max(0, min(x, len(m.line(m.cy))-1))
	if m.cy < m.top {
		m.top = m.cy
	}
	if m.cy >= m.top+m.view() {
		m.top = m.cy - m.view() + 1
	}
}

// search moves to the next match of the query after (or before) the
// cursor, wrapping around the text.
func (m *CopyMode) search(backward bool) {
	if m.query == "" {
		return
	}
	q := []rune(m.query)
	n := len(m.lines)
	for i := 0; i <= n; i++ {
		y := m.cy + i
		if backward {
			y = m.cy - i
		}
		y = ((y % n) + n) % n
		idx := runeIndexes(m.lines[y], q)
		if backward {
			for j := len(idx) - 1; j >= 0; j-- {
				if i > 0 || idx[j] < m.cx {
					m.moveTo(idx[j], y)
					return
				}
			}
		} else {
			for _, x := range idx {
				if i > 0 || x > m.cx {
					m.moveTo(x, y)
					return
				}
			}
		}
	}
	m.message = fmt.Sprintf("not found: %s", m.query)
}

// runeIndexes are the starts of q in line, in runes.
func runeIndexes(line, q []rune) []int {
	var out []int
	for i := 0; i+len(q) <= len(line); i++ {
		if string(line[i:i+len(q)]) == string(q) {
			out = append(out, i)
		}
	}
	return out
}

// selection returns the ordered ends of the selection, inclusive.
func (m *CopyMode) selection() (x0, y0, x1, y1 int) {
	x0, y0, x1, y1 = m.ax, m.ay, m.cx, m.cy
	if y1 < y0 || y1 == y0 && x1 < x0 {
		x0, y0, x1, y1 = x1, y1, x0, y0
	}
	return
}

func (m *CopyMode) selected(x, y int) bool {
	if !m.selecting {
		return false
	}
	x0, y0, x1, y1 := m.selection()
	if y < y0 || y > y1 {
		return false
	}
	return (y > y0 || x >= x0) && (y < y1 || x <= x1)
}

// copy sends the selection (or the cursor's line) to the user's clipboard
// with OSC 52, which the user's terminal (or the tmux around it) applies.
func (m *CopyMode) copy() {
	var text string
	if m.selecting {
		x0, y0, x1, y1 := m.selection()
		var b strings.Builder
		for y := y0; y <= y1; y++ {
			l := m.line(y)
			from, to := 0, len(l)
			if y == y0 {
				from = min(x0, len(l))
			}
			if y == y1 {
				to = min(x1+1, len(l))
			}
			b.WriteString(string(l[from:max(from, to)]))
			if y < y1 {
				b.WriteByte('\n')
			}
		}
		text = b.String()
	} else {
		text = string(m.line(m.cy))
	}
	m.copied = text
	fmt.Fprintf(m.w, "\x1b]52;c;%s\x07", base64.StdEncoding.EncodeToString([]byte(text)))
}

// open shows the whole text in the pager or the editor on the user's
// terminal, then comes back to copy mode.
func (m *CopyMode) open(editor bool) {
	what := "the pager"
	if editor {
		what = "the editor"
	}
	f, err := os.CreateTemp(m.TempDir, "muster-scrollback-*.txt")
	if err != nil {
		m.message = fmt.Sprintf("open %s: %v", what, err)
		return
	}
	defer os.Remove(f.Name())
	for _, l := range m.lines {
		f.WriteString(string(l) + "\n")
	}
	f.Close()
	if m.Open == nil {
		return
	}
	if err := m.Open(f.Name(), editor); err != nil {
		m.message = err.Error()
	}
}

// Draw paints the visible lines, the highlights and a status line, inside
// synchronized output.
func (m *CopyMode) Draw() {
	var b strings.Builder
	b.WriteString("\x1b[?2026h\x1b[?25l\x1b[0m")
	q := []rune(m.query)
	for r := range m.view() {
		y := m.top + r
		fmt.Fprintf(&b, "\x1b[%d;1H\x1b[2K", r+1)
		l := m.line(y)
		match := make([]bool, len(l))
		if len(q) > 0 {
			for _, i := range runeIndexes(l, q) {
				for j := i; j < i+len(q); j++ {
					match[j] = true
				}
			}
		}
		style := ""
		for x, c := range l {
			if x >= m.cols {
				break
			}
			want := "\x1b[0m"
			switch {
			case m.selected(x, y):
				want = "\x1b[0;7m"
			case match[x]:
				want = "\x1b[0;30;43m"
			}
			if want != style {
				b.WriteString(want)
				style = want
			}
			if c < 0x20 || c == 0x7f {
				c = '?'
			}
			b.WriteRune(c)
		}
		b.WriteString("\x1b[0m")
	}
	status := m.message
	if m.inPrompt {
		dir := "/"
		if m.promptBack {
			dir = "?"
		}
		status = dir + string(m.prompt)
	} else if status == "" {
		status = fmt.Sprintf("[copy mode] line %d of %d", m.cy+1, len(m.lines))
		if m.selecting {
			status += ", selecting (y copies)"
		}
	}
	if r := []rune(status); len(r) > m.cols {
		status = string(r[:m.cols])
	}
	fmt.Fprintf(&b, "\x1b[%d;1H\x1b[2K\x1b[7m%s\x1b[0m", m.rows, status)
	fmt.Fprintf(&b, "\x1b[%d;%dH\x1b[?25h\x1b[?2026l", m.cy-m.top+1, min(m.cx, m.cols-1)+1)
	io.WriteString(m.w, b.String())
}
