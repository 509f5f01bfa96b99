package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/termtext"
)

// The attention drawer, on top of the Live page: each open attention item
// with its question or command, the pane's screen, and on an Interactive
// server buttons for the answers the agent's dialog offers (read off the
// screen by the provider's provider.DialogReader, so the keys are the
// provider's own), Acknowledge, and the way to the terminal.
//
// An answer is checked against the screen at the moment of the click:
// POST /api/v1/attention/{id}/answer carries the option and the digest of
// the dialog the page showed; the server reads the pane again and sends
// the option's keys (op "send") only if the item is still open and the
// screen still shows that very dialog. Otherwise it sends nothing and
// answers 409 with the screen as it is now. The window between that read
// and the keys reaching the pane is the daemon's round trip (a
// millisecond); a dialog that changes within it gets the keys.

// liveItem is one open attention item in the drawer.
type liveItem struct {
	ID       int64  `json:"id"`
	Session  string `json:"session"`
	Provider string `json:"provider"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
	Opened   string `json:"opened"`
	// Running: the session has a live pane (a terminal to open).
	Running bool `json:"running"`
	// Host is the machine whose daemon holds the item ("" for this
	// one); Down says, while it does not answer, since when the item is
	// what it listed last (no answers then).
	Host   string `json:"host,omitempty"`
	Down   string `json:"down,omitempty"`
	Screen string `json:"screen,omitempty"`
	// Dialog is what the screen asks, when its provider can read it.
	Dialog *dialogView `json:"dialog,omitempty"`
}

// dialogView is a provider.Dialog as the page shows it: the keys stay on
// the server, which reads them again at the click.
type dialogView struct {
	Question string       `json:"question"`
	Subject  string       `json:"subject,omitempty"`
	Options  []optionView `json:"options"`
	// Digest names this dialog; an answer carries it back.
	Digest string `json:"digest"`
}

type optionView struct {
	Label  string `json:"label"`
	Answer string `json:"answer,omitempty"`
}

// maxAnswerBody bounds an answer request's body: {"option":N,"dialog":D}.
const maxAnswerBody = 4 << 10

// drawerItems are the open items, this machine's then each host's,
// oldest first, with the screens of their panes (shown, by session name;
// empty without the token) and the dialogs read off them. hostOf and
// down are by session name, as liveState makes them.
func drawerItems(items []proto.AttentionItem, running map[string]bool, shown, hostOf, down map[string]string) []liveItem {
	out := []liveItem{}
	for _, it := range items {
		if !it.Open {
			continue
		}
		li := liveItem{ID: it.ID, Session: it.SessionName, Provider: it.Provider, Reason: it.Reason,
			Message: termtext.Line(it.Message), Opened: it.OpenedAt, Running: running[it.SessionName],
			Host: hostOf[it.SessionName], Down: down[it.SessionName]}
		if li.Running {
			li.Screen = shown[it.SessionName]
			if it.Reason == string(proto.KindApprovalRequested) || it.Reason == string(proto.KindInputRequested) {
				if d, ok := readDialog(it.Provider, li.Screen); ok {
					li.Dialog = viewOf(d)
				}
			}
		}
		out = append(out, li)
	}
	return out
}

// readDialog asks the session's provider to read the dialog on screen.
func readDialog(providerName, screen string) (provider.Dialog, bool) {
	if screen == "" {
		return provider.Dialog{}, false
	}
	r, ok := all.As[provider.DialogReader](providerName)
	if !ok {
		return provider.Dialog{}, false
	}
	d, ok := r.Dialog(screen)
	if !ok || len(d.Options) == 0 {
		return provider.Dialog{}, false
	}
	return d, true
}

func viewOf(d provider.Dialog) *dialogView {
	v := &dialogView{Question: termtext.Line(d.Question), Subject: d.Subject, Digest: dialogDigest(d)}
	for _, o := range d.Options {
		v.Options = append(v.Options, optionView{Label: termtext.Line(o.Label), Answer: o.Answer})
	}
	return v
}

// dialogDigest names a dialog by everything that decides what an answer
// does: the question, its subject, and each option with its keys. It is
// lower-case letters only, so the redactor leaves it alone.
func dialogDigest(d provider.Dialog) string {
	h := sha256.New()
	for _, s := range []string{d.Question, d.Subject} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	for _, o := range d.Options {
		fmt.Fprintf(h, "%d:%s%d:%s", len(o.Label), o.Label, len(o.Keys), o.Keys)
	}
	sum := h.Sum(nil)
	// hex, then 0-9 moved to g-p: the page only echoes it back.
	b := []byte(hex.EncodeToString(sum[:12]))
	for i, c := range b {
		if c >= '0' && c <= '9' {
			b[i] = 'g' + (c - '0')
		}
	}
	return string(b)
}

// screensAllowed: a pane's screen shows what the agent shows, secrets the
// redactor misses included, so it needs the token on every server, as a
// terminal view does (termAllowed): a process of the user's that cannot
// read the printed URL cannot read screens through a read-only loopback
// server either.
func (s *Server) screensAllowed(r *http.Request) bool {
	return s.credential(r)
}

// answerRequest is the body of POST /api/v1/attention/{id}/answer.
type answerRequest struct {
	Option *int   `json:"option"`
	Dialog string `json:"dialog"`
	// Session is the item's session as the page showed it: once the item
	// is resolved the daemon no longer lists it, and the refusal still
	// shows that pane's screen.
	Session string `json:"session,omitempty"`
}

// answerRefusal says why nothing was sent, with the screen as it is now.
type answerRefusal struct {
	Error  string      `json:"error"`
	Screen string      `json:"screen,omitempty"`
	Dialog *dialogView `json:"dialog,omitempty"`
}

func (s *Server) handleAnswer(r *http.Request) reply {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return jsonReply{http.StatusBadRequest, map[string]string{"error": "an attention item's id is a positive number"}}
	}
	var req answerRequest
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxAnswerBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Option == nil || req.Dialog == "" {
		return jsonReply{http.StatusBadRequest, map[string]string{"error": `want {"option":N,"dialog":"DIGEST"} as the page sends it`}}
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.itemTimeout(id))
	defer cancel()
	items, err := s.itemsHolding(ctx, id)
	if err != nil {
		return jsonReply{http.StatusBadGateway, map[string]string{"error": err.Error() + ": nothing was sent"}}
	}
	var item *proto.AttentionItem
	for i := range items {
		if items[i].ID == id {
			item = &items[i]
		}
	}
	if item == nil || !item.Open {
		ref := answerRefusal{Error: fmt.Sprintf("attention item %d is no longer open: nothing was sent", id)}
		if item != nil {
			ref.Screen, _ = s.screenNow(ctx, item.SessionName)
		} else if checkPaneName(req.Session) == nil {
			ref.Screen, _ = s.screenNow(ctx, req.Session)
		}
		return jsonReply{http.StatusConflict, ref}
	}
	screen, err := s.screenNow(ctx, item.SessionName)
	if err != nil {
		return jsonReply{http.StatusConflict, answerRefusal{Error: fmt.Sprintf("session %s's screen could not be read (%v): nothing was sent", item.SessionName, err)}}
	}
	d, ok := readDialog(item.Provider, screen)
	if !ok {
		return jsonReply{http.StatusConflict, answerRefusal{Error: fmt.Sprintf("session %s shows no dialog now: nothing was sent", item.SessionName), Screen: screen}}
	}
	if dialogDigest(d) != req.Dialog {
		return jsonReply{http.StatusConflict, answerRefusal{Error: fmt.Sprintf("session %s's dialog changed since the page showed it: nothing was sent", item.SessionName), Screen: screen, Dialog: viewOf(d)}}
	}
	if *req.Option < 0 || *req.Option >= len(d.Options) {
		return jsonReply{http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("option %d: the dialog has options 0 to %d", *req.Option, len(d.Options)-1)}}
	}
	o := d.Options[*req.Option]
	if err := s.o.Send(ctx, item.SessionName, o.Keys); err != nil {
		return jsonReply{http.StatusBadGateway, map[string]string{"error": "send to " + item.SessionName + ": " + err.Error()}}
	}
	s.o.Logger.Info("answered from the drawer", "session", item.SessionName, "item", id, "option", o.Label)
	return jsonReply{http.StatusOK, map[string]string{"sent": o.Label, "session": item.SessionName}}
}

// itemTimeout bounds what a click on item id asks: a host's item crosses
// ssh.
func (s *Server) itemTimeout(id int64) time.Duration {
	if s.o.Remote != nil && s.o.Remote.HostItem(id) {
		return hostCallTimeout
	}
	return liveEventTimeout
}

// itemsHolding lists afresh the attention items of the daemon that holds
// item id: this machine's, or a host's.
func (s *Server) itemsHolding(ctx context.Context, id int64) ([]proto.AttentionItem, error) {
	if s.o.Remote != nil && s.o.Remote.HostItem(id) {
		return s.o.Remote.Attention(ctx, id)
	}
	items, err := s.o.Attention(ctx)
	if err != nil {
		return nil, fmt.Errorf("the daemon did not list its attention items: %w", err)
	}
	return items, nil
}

// screenNow reads a pane's screen as the drawer shows it.
func (s *Server) screenNow(ctx context.Context, name string) (string, error) {
	text, err := s.o.Capture(ctx, name)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(text) == "" {
		return "", errors.New("it is empty")
	}
	return previewText(text), nil
}
