package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// Styles use the 16 basic colours, so that they follow the user's palette;
// bubbletea downgrades or strips them for the terminal's colour profile.
var (
	styleBold      = ansi.NewStyle().Bold()
	styleFaint     = ansi.NewStyle().Faint()
	styleTitle     = ansi.NewStyle().Bold().Reverse(true)
	styleError     = ansi.NewStyle().ForegroundColor(ansi.Red)
	styleConfirm   = ansi.NewStyle().Bold().ForegroundColor(ansi.Red)
	styleAttention = ansi.NewStyle().Bold().ForegroundColor(ansi.BrightYellow)

	styleRunning     = ansi.NewStyle().ForegroundColor(ansi.Cyan)
	styleInput       = ansi.NewStyle().Bold().ForegroundColor(ansi.Yellow)
	styleApproval    = ansi.NewStyle().Bold().ForegroundColor(ansi.BrightYellow)
	styleSucceeded   = ansi.NewStyle().ForegroundColor(ansi.Green)
	styleFailed      = ansi.NewStyle().ForegroundColor(ansi.Red)
	styleInterrupted = ansi.NewStyle().ForegroundColor(ansi.BrightRed)
	styleDisconn     = ansi.NewStyle().ForegroundColor(ansi.Blue)
	styleIdle        = ansi.NewStyle().ForegroundColor(ansi.White)
	styleQuiet       = ansi.NewStyle().ForegroundColor(ansi.BrightBlack)
	styleRestorable  = ansi.NewStyle().ForegroundColor(ansi.Magenta)
)

// badge is how a state shows: a one-cell glyph, a label and a colour.
type badge struct {
	glyph string
	label string
	style ansi.Style
}

func (b badge) render() string { return b.style.Styled(b.glyph + " " + b.label) }

// runBadges covers every run state DESIGN §4 defines, plus idle, each
// with its word of the vocabulary (proto/vocabulary.go: the same word ls,
// the web pages and --json show), its own glyph and its own colour.
var runBadges = map[proto.RunState]badge{
	proto.StateRunning:         {"●", "running", styleRunning},
	proto.StateWaitingInput:    {"◐", "waitingInput", styleInput},
	proto.StateWaitingApproval: {"▲", "waitingApproval", styleApproval},
	proto.StateSucceeded:       {"✓", "succeeded", styleSucceeded},
	proto.StateFailed:          {"✗", "failed", styleFailed},
	proto.StateInterrupted:     {"■", "interrupted", styleInterrupted},
	proto.StateDisconnected:    {"◇", "disconnected", styleDisconn},
	proto.StateIdle:            {"○", "idle", styleIdle},
	proto.StateLimited:         {"⏸", "limited", styleInterrupted},
}

// sessionBadge says what a session is doing. The process state wins over
// the last run state: a restorable or exited session is not "running"
// whatever its last run said.
func sessionBadge(s proto.SessionInfo) badge {
	switch s.State {
	case "restorable":
		return badge{"⟲", "restorable", styleRestorable}
	case "exited":
		return badge{"□", s.StatusLabel(), styleQuiet}
	case proto.PaneExternal:
		// Run by the CLI's own supervisor: its word for the process
		// (busy, idle); ACTIVITY has its word for the agent.
		word := "external"
		if x := s.External; x != nil && x.Status != "" {
			word += " " + termtext.Line(x.Status)
		}
		return badge{"↗", word, styleQuiet}
	}
	if s.RunState == nil {
		// A live pane with no run yet: a shell, or an agent that has not
		// reported anything; ACTIVITY says what its terminal shows.
		return badge{"◌", proto.PaneLive, ansi.Style{}}
	}
	if b, ok := runBadges[proto.RunState(*s.RunState)]; ok {
		return b
	}
	return badge{"·", termtext.Line(*s.RunState), ansi.Style{}}
}

// reasonBadges cover the attention item reasons of DESIGN §4.
var reasonBadges = map[string]badge{
	"approval-requested": {"▲", "approval-requested", styleApproval},
	"input-requested":    {"◐", "input-requested", styleInput},
	"failed":             {"✗", "failed", styleFailed},
	"disconnected":       {"◇", "disconnected", styleDisconn},
	"succeeded":          {"✓", "succeeded", styleSucceeded},
}

func reasonBadge(reason string) badge {
	if b, ok := reasonBadges[reason]; ok {
		return b
	}
	return badge{"·", termtext.Line(reason), ansi.Style{}}
}

// width is ansi.StringWidth with a fast path for ASCII text and its SGR
// styling, which is most of a frame: grapheme segmentation was three
// quarters of BenchmarkView.
func width(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			return ansi.StringWidth(s)
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			i += 2
			for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
				i++
			}
		case c < 0x20 || c == 0x7f:
			return ansi.StringWidth(s)
		default:
			n++
		}
	}
	return n
}

// cell fits s into exactly w columns: cut with an ellipsis, or padded.
func cell(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := width(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = width(s)
	}
	return s + strings.Repeat(" ", w-n)
}

// cellLeft is cell for paths: the end of a path says more than its start.
func cellLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if n := width(s); n > w {
		s = "…" + ansi.TruncateLeft(s, n-w+1, "")
	}
	return cell(s, w)
}

// fit cuts a finished line to the screen width.
func fit(s string, w int) string {
	if width(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// age renders how long ago an RFC 3339 time was, coarsely, as `muster ls`
// does.
func age(ts string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "?"
	}
	d := max(0, now.Sub(t))
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

// createdAge is AGE, the time since the session was created, as ls
// shows it.
func createdAge(s proto.SessionInfo, now time.Time) string { return age(s.CreatedAt, now) }

// contextLeft renders how much of its context window a session's agent
// has left, as a percentage when the window is known, else the tokens
// used; "" when its agent reported neither. Little left is highlighted:
// the agent is about to compact or stop.
func contextLeft(s proto.SessionInfo) string {
	used, window := s.ContextTokens, s.ContextWindow
	switch {
	case used <= 0:
		return ""
	case window <= 0:
		return tokens(used) + " used"
	}
	left := max(window-used, 0) * 100 / window
	out := fmt.Sprintf("%d%% left", left)
	if left <= 10 {
		return styleAttention.Styled(out)
	}
	return out
}

// tokens renders a token count in at most four columns.
func tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 9_950: // not 10.0k
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	case n < 9_950_000:
		return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
	}
	return fmt.Sprintf("%dM", n/1_000_000)
}

// tilde shortens a path under home.
func tilde(p, home string) string {
	if home == "" || home == "/" {
		return p
	}
	if p == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(p, home+"/"); ok {
		return "~/" + rest
	}
	return p
}
