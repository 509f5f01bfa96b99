package daemon

import (
	"context"
	"fmt"
	"strings"

	"github.com/musterhq/muster/internal/panepeer"
	"github.com/musterhq/muster/internal/proto"
)

// A process inside a pane must not drive other panes (seed 004: a pane's
// capability "does not authorize terminal input, screen capture, or events
// for another surface"), yet control.sock and events.sock are open to every
// process of the user. So each connection asks who connected (SO_PEERCRED)
// and internal/panepeer places that process: outside every pane, inside
// pane P (by ancestry, session or environment), or unidentified. The
// rules built on it, exactly:
//
//   - A control pane (muster new --control, set only from outside every
//     pane) is the user's own: a peer inside it passes every rule below as
//     a peer outside the panes does, except that it may not attach to its
//     own pane nor create another control pane.
//   - control.sock: each op of proto.Ops declares its access rule, and gate
//     (daemon.go) applies it. A peer inside a pane may run the ReadOnly ops
//     (status, ls, wait, attention, explain: orchestration needs them) and
//     the OwnPane ops on P itself and on the sessions descended from P:
//     send, capture, kill, rename and ack; new (the session is recorded as
//     P's child); native_capture (for P only, with P's capability besides).
//     The Outside ops (stop, resume, attach) and ack --all are refused from
//     inside a pane, and so is every op not in the table.
//   - events.sock: an event for surface S is recorded only from a peer
//     outside every pane (a user running a hook by hand) or inside the pane
//     of S's own session (mayRecord). Events of a routed provider (Codex)
//     are exempt: their pane is worked out from the session id, and seed
//     004 says their hooks may run in another pane's process.
//   - Refusals carry proto.CodeForbidden (control) and proto.ErrForbidden
//     (events), and change nothing.
//   - An unidentified peer (it died, or lives in a pid namespace the daemon
//     cannot see) counts as inside an unknown pane: read-only on control,
//     no events.
//
// Both go through one panepeer.Cache: a pane's own hook is placed with one
// getsid call, and so is a client seen before while the panes do not
// change, so the check costs events.sock next to nothing.

// paneIndexLocked snapshots the panes for the classification; d.mu is
// held.
func (d *Daemon) paneIndexLocked() panepeer.Index {
	idx := panepeer.Index{
		Roots:    make(map[int]string, len(d.sessions)),
		Surfaces: make(map[string]string, len(d.sessions)),
		Names:    make(map[string]string, len(d.sessions)),
		// Ghosts are only ever added.
		Generation: uint64(len(d.ghosts)),
	}
	for id, s := range d.sessions {
		idx.Names[id] = s.rec.Name
		if s.surface.ID != "" {
			idx.Surfaces[s.surface.ID] = id
		}
		if s.pane != nil {
			if exited, _ := s.pane.Exited(); !exited {
				idx.Roots[s.pane.PID()] = id
			}
		}
	}
	return idx
}

// whereIs classifies the process pid against the daemon's panes.
func (d *Daemon) whereIs(ctx context.Context, pid int) panepeer.Where {
	if d.peers == nil {
		// Nothing can be read about processes here: every peer counts as
		// outside (see the README's security section).
		return panepeer.Where{PID: pid}
	}
	d.mu.Lock()
	idx := d.paneIndexLocked()
	d.mu.Unlock()
	idx.LookupSurface = func(surf string) (string, string, bool) {
		d.mu.Lock()
		g, ok := d.ghosts[surf]
		d.mu.Unlock()
		if ok {
			return g.sessionID, g.name, true
		}
		id, err := d.store.SurfaceSession(ctx, surf)
		if err != nil {
			return "", "", false
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if s, ok := d.sessions[id]; ok {
			return id, s.rec.Name, true
		}
		return id, "", true
	}
	w := d.peers.Classify(idx, pid)
	if w.InPane && w.SessionID != "" {
		d.mu.Lock()
		if s, ok := d.sessions[w.SessionID]; ok && s.rec.Control {
			w.Control = true
		}
		d.mu.Unlock()
	}
	return w
}

// MayRecord is the events.sock rule (events.SenderGate): an event for a
// surface of session sessionID may come from a process outside every pane
// or inside that session's pane.
func (d *Daemon) MayRecord(pid int, sessionID string) error {
	return d.mayRecordFrom(d.whereIs(context.Background(), pid), sessionID)
}

func (d *Daemon) mayRecordFrom(w panepeer.Where, sessionID string) error {
	if !w.InPane || w.Control || w.SessionID != "" && w.SessionID == sessionID {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	target := "another session"
	if s, ok := d.sessions[sessionID]; ok {
		target = fmt.Sprintf("pane %q", s.rec.Name)
	}
	return fmt.Errorf("%s: it may not send events for %s", d.paneNameLocked(w), target)
}

// ghost remembers a killed session's surfaces for the daemon's life, so a
// process that outlived the pane is still known to come from it.
type ghost struct{ sessionID, name string }

// mayDriveLocked reports whether a peer may act on s (send, capture, kill,
// rename, ack): any peer outside the panes, or a peer inside s's pane or
// the pane of one of s's ancestors. d.mu is held.
func (d *Daemon) mayDriveLocked(p panepeer.Where, s *session) error {
	if !p.InPane || p.Control {
		return nil
	}
	if p.SessionID != "" {
		cur := s
		for range panepeer.MaxAncestry {
			if cur.rec.ID == p.SessionID {
				return nil
			}
			next, ok := d.sessions[cur.rec.ParentID]
			if cur.rec.ParentID == "" || !ok {
				break
			}
			cur = next
		}
	}
	return d.forbiddenLocked(p, fmt.Sprintf("it may not drive pane %q", s.rec.Name),
		"a process inside a pane may drive only its own pane and the sessions it started; run this from a terminal outside muster")
}

// mayAttachLocked is mayDriveLocked for attach, which also refuses the
// peer's own pane: a client inside the pane it shows would type into
// itself and echo its own output forever (tmux refuses the same). A pane
// may attach to the sessions it started, a nested client the user asked
// for (muster new --attach). d.mu is held.
func (d *Daemon) mayAttachLocked(p panepeer.Where, s *session) error {
	if p.InPane && p.SessionID == s.rec.ID {
		what, hint := refusalFor(proto.OpAttach)
		return d.forbiddenLocked(p, what, hint)
	}
	return d.mayDriveLocked(p, s)
}

// forbiddenLocked builds the one refusal a peer inside a pane gets. d.mu is
// held.
func (d *Daemon) forbiddenLocked(p panepeer.Where, what, hint string) error {
	return &proto.Error{
		Code:    proto.CodeForbidden,
		Message: "refused: this process runs inside " + d.paneNameLocked(p) + "; " + what,
		Hint:    hint,
	}
}

// paneNameLocked names the pane a peer runs in, as of now. d.mu is held.
func (d *Daemon) paneNameLocked(p panepeer.Where) string {
	if s, ok := d.sessions[p.SessionID]; ok {
		return fmt.Sprintf("muster pane %q", s.rec.Name)
	}
	if p.Name != "" {
		return fmt.Sprintf("muster pane %q (closed)", p.Name)
	}
	return "a muster pane"
}

// refusalFor words the refusal of an op refused outright.
func refusalFor(op string) (what, hint string) {
	switch op {
	case "stop":
		return "it may not stop the daemon", "stop the daemon from a terminal outside muster"
	case "resume":
		return "it may not resume sessions", "resume from a terminal outside muster"
	case "attach":
		return "attaching to the pane you are in would feed it its own output",
			"attach from a terminal outside muster; from here, `muster capture` and `muster send` work on the sessions this pane started"
	case "ack":
		return "it may not acknowledge every attention item", "acknowledge the items of this pane's own sessions by id"
	}
	return fmt.Sprintf("op %q is not allowed from a pane", strings.TrimSpace(op)), "run this from a terminal outside muster"
}
