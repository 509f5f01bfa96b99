package tui

import (
	"errors"
	"fmt"
	"io"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// PreviewStream is an open op "preview": the daemon pushes the pane's
// screen whenever it changes. Next blocks until the next screen and
// returns io.EOF once the daemon ended the stream (the pane exited);
// Close ends it and wakes a blocked Next.
type PreviewStream interface {
	Next() (proto.PreviewScreen, error)
	Close() error
}

// preview is the stream feeding the preview box, for one session.
type preview struct {
	seq     int // which open this is; messages of older ones are dropped
	name    string
	surface string // the surface being shown: a resume starts another
	stream  PreviewStream
	screen  *proto.PreviewScreen
	err     error // the stream failed (io.EOF: it ended)
	opening bool
}

type (
	previewOpenedMsg struct {
		seq    int
		stream PreviewStream
		screen proto.PreviewScreen
		err    error
	}
	previewMsg struct {
		seq    int
		screen proto.PreviewScreen
		err    error
	}
)

// previewWanted reports whether the preview box is on screen.
func (m Model) previewWanted() bool {
	return m.pvMode() != pvHidden
}

// syncPreview opens, reopens or closes the preview stream so that it
// follows the selected session: another session, a resumed one (another
// surface), or the daemon back after it was away.
func (m Model) syncPreview() (Model, tea.Cmd) {
	var want proto.SessionInfo
	if m.previewWanted() {
		want, _ = m.target()
	}
	if want.External != nil {
		// No pane of Muster's shows it: previewNote says so.
		want = proto.SessionInfo{}
	}
	cur := m.pv
	switch {
	case want.Name == "":
		if cur.name == "" {
			return m, nil
		}
		m.pv = preview{seq: cur.seq}
		return m, closeCmd(cur.stream)
	case cur.name == want.Name && cur.opening:
		return m, nil
	case cur.name == want.Name && cur.err == nil:
		return m, nil
	case cur.name == want.Name && errors.Is(cur.err, io.EOF) && want.SurfaceID == cur.surface:
		// The pane exited and nothing replaced it: its last screen stays.
		return m, nil
	case cur.name == want.Name && cur.err != nil && !errors.Is(cur.err, io.EOF) && m.err != nil:
		// The daemon is away; try again once it answers.
		return m, nil
	case cur.name == want.Name && isRefusal(cur.err) && want.SurfaceID == cur.surface:
		return m, nil
	}
	seq := cur.seq + 1
	m.pv = preview{seq: seq, name: want.Name, surface: want.SurfaceID, opening: true}
	if cur.name == want.Name {
		m.pv.screen = cur.screen // keep showing it until the new one comes
	}
	ctx, b, name := m.ctx, m.backend, want.Name
	open := func() tea.Msg {
		sc, st, err := b.Preview(ctx, name)
		return previewOpenedMsg{seq: seq, stream: st, screen: sc, err: err}
	}
	return m, tea.Batch(closeCmd(cur.stream), open)
}

// isRefusal reports whether err is the daemon's answer rather than a
// broken connection: asking again would get the same answer.
func isRefusal(err error) bool {
	_, ok := errors.AsType[*proto.Error](err)
	return ok
}

func closeCmd(st PreviewStream) tea.Cmd {
	if st == nil {
		return nil
	}
	return func() tea.Msg {
		st.Close()
		return nil
	}
}

func nextPreviewCmd(seq int, st PreviewStream) tea.Cmd {
	return func() tea.Msg {
		sc, err := st.Next()
		return previewMsg{seq: seq, screen: sc, err: err}
	}
}

// updatePreview applies the preview messages.
func (m Model) updatePreview(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case previewOpenedMsg:
		if msg.seq != m.pv.seq {
			return m, closeCmd(msg.stream)
		}
		m.pv.opening = false
		if msg.err != nil {
			m.pv.err = msg.err
			return m, nil
		}
		m.pv.stream, m.pv.screen = msg.stream, &msg.screen
		if msg.screen.SurfaceID != "" {
			m.pv.surface = msg.screen.SurfaceID
		}
		if msg.screen.Exited {
			m.pv.err = io.EOF
			return m, closeCmd(msg.stream)
		}
		return m, nextPreviewCmd(msg.seq, msg.stream)
	case previewMsg:
		if msg.seq != m.pv.seq {
			return m, nil
		}
		if msg.err != nil {
			m.pv.err = msg.err
			st := m.pv.stream
			m.pv.stream = nil
			return m, closeCmd(st)
		}
		m.pv.screen = &msg.screen
		if msg.screen.Exited {
			m.pv.err = io.EOF
			return m, nil // the daemon ends the stream after this one
		}
		return m, nextPreviewCmd(msg.seq, m.pv.stream)
	}
	return m, nil
}

// previewBox draws the preview of the selected session in w×h cells: a
// title line, then the bottom rows of the pane's screen, where an agent's
// latest output and its prompt are.
type previewBox struct {
	pv   preview
	w, h int
	note string // shown instead of a screen when there is none (previewNote)
}

// previewNote is what the preview box says of a selection it cannot show:
// an agent another supervisor runs has no pane of Muster's.
func (m Model) previewNote() string {
	s, ok := m.target()
	if !ok || s.External == nil {
		return ""
	}
	return termtext.Line(s.Name) + " is run by " + externalBy(s) + ", not muster; enter opens it in a pane (" + termtext.Line(s.External.Attach) + ")"
}

func (p previewBox) Render() []string {
	if p.h <= 0 || p.w <= 0 {
		return nil
	}
	title := "preview"
	if p.pv.name != "" {
		title += " · " + termtext.Line(p.pv.name)
	}
	sc := p.pv.screen
	if sc != nil && sc.Cols > 0 {
		title += fmt.Sprintf(" · %d×%d", sc.Cols, sc.Rows)
	}
	switch {
	case p.pv.err != nil && errors.Is(p.pv.err, io.EOF):
		if sc != nil && sc.ExitCode != nil {
			title += fmt.Sprintf(" · exited %d", *sc.ExitCode)
		} else {
			title += " · not running"
		}
	case p.pv.err != nil:
		title += " · " + errorText(p.pv.err)
	case p.pv.opening && sc == nil:
		title += " · connecting…"
	}
	head := styleFaint.Styled(fit("── "+title+" ", p.w))
	if rest := p.w - ansi.StringWidth(ansi.Strip(head)); rest > 0 {
		head = styleFaint.Styled(ansi.Strip(head) + strings.Repeat("─", rest))
	}
	lines := []string{head}
	rows := p.h - 1
	if p.pv.name == "" && p.note != "" {
		for _, l := range strings.Split(ansi.Wordwrap(p.note, max(p.w-2, 1), ""), "\n") {
			lines = append(lines, styleFaint.Styled(fit("  "+l, p.w)))
		}
	} else if p.pv.name == "" {
		lines = append(lines, styleFaint.Styled("  no session selected"))
	} else if sc != nil {
		src := sc.Lines
		if len(src) > rows {
			src = src[len(src)-rows:]
		}
		for _, l := range src {
			l = termtext.Row(l)
			if ansi.StringWidth(l) > p.w {
				l = ansi.Truncate(l, p.w, "")
			}
			if strings.Contains(l, "\x1b") {
				l += "\x1b[m"
			}
			lines = append(lines, l)
		}
	}
	for len(lines) < p.h {
		lines = append(lines, "")
	}
	return lines[:p.h]
}
