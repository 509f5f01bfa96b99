package attachterm

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// Notice is the sequence that tells the user, while attached, of another
// session's new attention item n the way style asks: a line over the
// bottom row (rows) cut to cols cells, the bell, and a desktop
// notification through the outer terminal (OSC 9 or OSC 777). The line
// stays until the pane's next redraw of that row or the repaint that
// takes it away.
func Notice(style proto.AttachNotice, n proto.Notice, cols, rows int) string {
	var b strings.Builder
	title, body := termtext.Line(n.Title), termtext.Clip(n.Body, 200)
	if style.Line && cols > 0 && rows > 0 {
		text := " muster: " + title
		if body != "" {
			text += ": " + body
		}
		if n.Session != "" {
			text += " (muster attach " + termtext.Line(n.Session) + ")"
		}
		text = ansi.Truncate(text, cols-1, "…") + " "
		b.WriteString("\x1b7\x1b[")
		b.WriteString(strconv.Itoa(rows))
		b.WriteString(";1H\x1b[0;7m\x1b[2K")
		b.WriteString(text)
		b.WriteString("\x1b[0m\x1b8")
	}
	if style.Bell {
		b.WriteByte('\a')
	}
	// Both are ended by BEL, which every terminal that knows them takes;
	// the text holds no control character (termtext.Line), so nothing in
	// it ends the sequence early.
	switch style.Terminal {
	case "osc9":
		// "Muster: " first: OSC 9 text starting "4;" is ConEmu's
		// progress report.
		b.WriteString("\x1b]9;Muster: " + title)
		if body != "" {
			b.WriteString(": " + body)
		}
		b.WriteByte('\a')
	case "osc777":
		// The title ends at the first ';'.
		b.WriteString("\x1b]777;notify;Muster: " + strings.ReplaceAll(title, ";", ",") + ";" + body + "\a")
	}
	return b.String()
}
