package web

import (
	"context"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// Other machines (`muster host add`) on the Live page: their sessions are
// listed beside this machine's as HOST:NAME, their attention items join
// the drawer, and /term/HOST:NAME opens one as a terminal. The web server
// reaches no host itself: Options.Remote (internal/cli's serve) holds the
// links, and Options.Attach, Capture, Send and Ack take HOST:NAME (a name
// on this machine never holds a ':') and a host's item ids as Remote
// numbers them.
//
// What a host pushes reaches the page the way this machine's daemon's
// pushes do: the hub follows Remote while a page listens, so a host costs
// one link however many pages are open, and nothing while none is. A
// host that is slow or down never holds up this machine's rows: its state
// arrives on its own, and every call on one is bounded (hostCallTimeout).

// Remote is the other machines, as the Live page follows them.
type Remote interface {
	// Follow keeps every host's state current until ctx ends, calling
	// push with all of them after each change (the first push at once,
	// every host "connecting" until it answers).
	Follow(ctx context.Context, push func([]HostState))
	// Preview streams the screen of a host's session (HOST:NAME) as
	// Options.Preview does; a host that can never stream one may block
	// until ctx ends.
	Preview(ctx context.Context, name string, push func(proto.PreviewScreen)) error
	// HostItem reports whether attention item id is a host's.
	HostItem(id int64) bool
	// Attention lists afresh the attention items of the host holding
	// item id, numbered and named as Follow numbers and names them.
	Attention(ctx context.Context, id int64) ([]proto.AttentionItem, error)
}

// HostState is one host as Remote.Follow pushes it.
type HostState struct {
	Name string
	// State is `muster host ls`'s word: connected, connecting,
	// unreachable, needs-attention. Connected says whether it is the
	// first: the others show what the host listed last, dimmed.
	State     string
	Connected bool
	Reason    string
	// Command, for needs-attention, is the ssh command to run once by
	// hand.
	Command string
	// LastSeen is when the host last answered; zero if never.
	LastSeen time.Time
	// Sessions are named HOST:NAME; Attention's items name their
	// sessions so, carry Host, and have ids apart from this machine's.
	Sessions  []proto.SessionInfo
	Attention []proto.AttentionItem
}

// hostCallTimeout bounds what a click asks of a host (an answer, an
// acknowledgement): three round trips over ssh, perhaps a new link.
const hostCallTimeout = 10 * time.Second

// maxHostPreviews bounds the host screens the hub follows: each is a
// link of its own (an ssh session and a relay on the host) for as long
// as a page listens, so only the sessions with an open attention item
// get one (the drawer reads their dialogs off them); the rest show their
// screen in their terminal view.
const maxHostPreviews = 8

// liveHost is a host as the page shows it.
type liveHost struct {
	Name  string `json:"name"`
	State string `json:"state"`
	Up    bool   `json:"up"`
	// Note says, for a host that is not connected, why, what to run
	// and when it last answered, on one line ("reason; run once by
	// hand: COMMAND; last seen 15:04").
	Note string `json:"note,omitempty"`
}

// hostView is h as the page shows it, and the line its rows carry while
// it is not connected ("" while it is).
func (s *Server) hostView(h HostState) (liveHost, string) {
	lh := liveHost{Name: termtext.Line(h.Name), State: termtext.Line(h.State), Up: h.Connected}
	if h.Connected {
		return lh, ""
	}
	seen := "never seen"
	if !h.LastSeen.IsZero() {
		seen = "last seen " + s.clock(h.LastSeen)
	}
	var note []string
	if h.Reason != "" {
		note = append(note, termtext.Line(h.Reason))
	}
	if h.Command != "" {
		note = append(note, "run once by hand: "+termtext.Line(h.Command))
	}
	lh.Note = strings.Join(append(note, seen), "; ")
	return lh, lh.Name + " " + lh.State + "; " + seen
}

// clock says t in the server's time zone: the time of day, with the
// date when it is not today.
func (s *Server) clock(t time.Time) string {
	loc := s.location()
	t, now := t.In(loc), s.now().In(loc)
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04")
	}
	return t.Format("Jan 2 15:04")
}
