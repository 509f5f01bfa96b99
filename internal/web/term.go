package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/coder/websocket"

	"github.com/musterhq/muster/internal/proto"
)

// The terminal view: GET /term/{name} is a page with xterm.js (vendored
// under third_party/xterm, served from the binary at /assets/), and
// GET /term/{name}/ws is its WebSocket, relaying the pane stream `muster
// attach` reads (proto frames over control.sock) to the page:
//
//   - server → page: binary messages are terminal bytes for xterm.js (the
//     daemon's snapshot first, sized to the page, then output); text
//     messages are JSON: {"type":"hello",...}, {"type":"exit","code":N},
//     {"type":"refused","message":...}.
//   - page → server: binary messages are keys for the pane, dropped
//     unless the server is --interactive and the page took control; text
//     messages are {"type":"resize","cols":C,"rows":R}.
//
// A page that has not taken control attaches read-only: the daemon paints
// it at its own size and never resizes the pane for it, as for `muster
// attach --read-only`. Terminal bytes go to xterm.js as the pane wrote
// them, as to `muster attach`: xterm.js is a terminal, not markup, and a
// redactor cannot follow a secret across escape sequences and frames.
// Only a holder of the token gets them (termAllowed).

// PaneStream is one attach to a pane (op "attach" on control.sock).
type PaneStream interface {
	// Next returns the next frame from the daemon.
	Next() (typ byte, payload []byte, err error)
	Input(b []byte) error
	Resize(cols, rows int) error
	Close() error
}

// Limits of the terminal WebSocket.
const (
	// maxTermMessage bounds a message from the page: a pasted line or a
	// resize. A larger one closes the connection (1009) before it is
	// read into memory.
	maxTermMessage = 64 << 10
	// maxTerms bounds the terminal views open at once; each holds one
	// connection to the daemon, which allows a process 32 (README,
	// "Limits on control.sock"): the rest are the Live page's watch and
	// previews. More views are refused (503) before the upgrade.
	maxTerms = 16
	// termWriteTimeout bounds one write to a page; a page that reads no
	// faster loses its connection (it reconnects and gets a snapshot).
	termWriteTimeout = 20 * time.Second
)

// termCSP is the policy of the terminal page: scripts and styles from this
// server only (xterm.js sets inline styles on its own elements), and
// WebSockets to this origin.
const termCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src data:; font-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// termMsg is a text message on the terminal WebSocket.
type termMsg struct {
	Type        string `json:"type"`
	Cols        int    `json:"cols,omitempty"`
	Rows        int    `json:"rows,omitempty"`
	Code        *int   `json:"code,omitempty"`
	Message     string `json:"message,omitempty"`
	ReadOnly    bool   `json:"read_only,omitempty"`
	Interactive bool   `json:"interactive,omitempty"`
}

func (s *Server) handleTermPage(r *http.Request) reply {
	name := r.PathValue("name")
	if err := checkPaneName(name); err != nil {
		return errorPage(http.StatusBadRequest, err.Error())
	}
	return termPageReply{name: name}
}

type termPageReply struct{ name string }

func (t termPageReply) write(s *Server, w http.ResponseWriter, r *http.Request) {
	if !s.termAllowed(r) {
		unauthorized(w)
		return
	}
	data := map[string]any{"Name": t.name, "Interactive": s.o.Interactive, "Version": s.o.Version}
	s.writeTermPage(w, data)
}

// termAllowed: pane contents and keys need the token on every server, a
// read-only loopback one included, so that a process of the user's (one
// in a pane, say) that cannot read the printed URL cannot watch or drive
// panes through the web server.
func (s *Server) termAllowed(r *http.Request) bool {
	return s.credential(r)
}

// sameOrigin reports whether r comes from a page of this server: its
// Origin names the Host it was sent to. Browsers send Origin with every
// WebSocket handshake and every POST, so a page elsewhere cannot pass.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	return normalizeHost(u.Host) == normalizeHost(r.Host) && portOf(u) == portOf(&url.URL{Scheme: u.Scheme, Host: r.Host})
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func (s *Server) handleTermWS(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !s.termAllowed(r) {
		unauthorized(w)
		return
	}
	if !sameOrigin(r) {
		http.Error(w, "a terminal opens only from this server's own pages (Origin)", http.StatusForbidden)
		return
	}
	if err := checkPaneName(name); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	control := r.URL.Query().Get("control") == "1"
	if control && !s.o.Interactive {
		http.Error(w, "this server is read-only: start it with muster serve --interactive to type into panes", http.StatusForbidden)
		return
	}
	if s.o.Attach == nil {
		http.Error(w, "no daemon to attach to", http.StatusServiceUnavailable)
		return
	}
	select {
	case s.terms <- struct{}{}:
		defer func() { <-s.terms }()
	default:
		http.Error(w, fmt.Sprintf("too many terminal views open (at most %d)", maxTerms), http.StatusServiceUnavailable)
		return
	}
	cols, _ := strconv.Atoi(r.URL.Query().Get("cols"))
	rows, _ := strconv.Atoi(r.URL.Query().Get("rows"))
	if !proto.ValidSize(cols, rows) {
		cols, rows = 80, 24
	}
	c, err := websocket.Accept(w, r, nil) // the library checks Origin against Host again
	if err != nil {
		return
	}
	c.SetReadLimit(maxTermMessage)
	defer c.CloseNow()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ps, err := s.o.Attach(ctx, proto.AttachArgs{Name: name, Cols: cols, Rows: rows, ReadOnly: !control})
	if err != nil {
		msg, _ := json.Marshal(termMsg{Type: "refused", Message: "attach " + name + ": " + err.Error()})
		s.writeTerm(ctx, c, websocket.MessageText, msg)
		c.Close(websocket.StatusNormalClosure, "attach refused")
		return
	}
	defer ps.Close()
	hello, _ := json.Marshal(termMsg{Type: "hello", ReadOnly: !control, Interactive: s.o.Interactive})
	if s.writeTerm(ctx, c, websocket.MessageText, hello) != nil {
		return
	}
	go func() {
		defer cancel()
		s.relayPane(ctx, c, ps)
	}()
	s.relayPage(ctx, c, ps, control)
}

func (s *Server) writeTerm(ctx context.Context, c *websocket.Conn, typ websocket.MessageType, b []byte) error {
	ctx, cancel := context.WithTimeout(ctx, termWriteTimeout)
	defer cancel()
	return c.Write(ctx, typ, b)
}

// relayPane sends the pane's frames to the page until the pane exits or
// either side goes away.
func (s *Server) relayPane(ctx context.Context, c *websocket.Conn, ps PaneStream) {
	go func() {
		<-ctx.Done()
		ps.Close() // unblocks Next
	}()
	for {
		typ, payload, err := ps.Next()
		if err != nil {
			c.Close(websocket.StatusGoingAway, "the daemon ended the stream")
			return
		}
		switch typ {
		case proto.FrameOutput, proto.FrameSnapshot:
			if s.writeTerm(ctx, c, websocket.MessageBinary, payload) != nil {
				return
			}
		case proto.FrameExit:
			var ex struct {
				ExitCode int `json:"exit_code"`
			}
			json.Unmarshal(payload, &ex)
			msg, _ := json.Marshal(termMsg{Type: "exit", Code: &ex.ExitCode})
			s.writeTerm(ctx, c, websocket.MessageText, msg)
			c.Close(websocket.StatusNormalClosure, "the pane exited")
			return
		}
	}
}

// relayPage reads the page's messages until it goes away: keys (only with
// control) and resizes.
func (s *Server) relayPage(ctx context.Context, c *websocket.Conn, ps PaneStream, control bool) {
	warned := false
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) && ctx.Err() == nil {
				s.o.Logger.Debug("terminal websocket", "err", err)
			}
			return
		}
		switch typ {
		case websocket.MessageBinary:
			if !control {
				// A read-only view drops keys; the page hears why once.
				if !warned {
					warned = true
					msg, _ := json.Marshal(termMsg{Type: "refused", Message: "read-only view: keys are not sent (take control on a --interactive server)"})
					s.writeTerm(ctx, c, websocket.MessageText, msg)
				}
				continue
			}
			if err := ps.Input(b); err != nil {
				return
			}
		case websocket.MessageText:
			var m termMsg
			if json.Unmarshal(b, &m) != nil || m.Type != "resize" || !proto.ValidSize(m.Cols, m.Rows) {
				c.Close(websocket.StatusUnsupportedData, "want {\"type\":\"resize\",\"cols\":C,\"rows\":R}")
				return
			}
			if err := ps.Resize(m.Cols, m.Rows); err != nil {
				return
			}
		}
	}
}

// checkPaneName refuses what cannot be a session's name before the daemon
// is asked (it checks the rest).
func checkPaneName(name string) error {
	if name == "" || len(name) > 256 {
		return errors.New("a session name has 1 to 256 bytes")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return errors.New("a session name has no control characters")
		}
	}
	return nil
}
