package daemon

import (
	"context"
	"fmt"
	"strings"

	"github.com/musterhq/muster/internal/proto"
)

// A process inside a pane must not drive other panes (seed 004: a pane's
// capability "does not authorize terminal input, screen capture, or events
// for another surface"), yet control.sock is open to every process of the
// user. So each control connection asks who connected (SO_PEERCRED) and
// whether that process runs inside a pane. The rule, exactly:
//
//   - The peer is inside pane P when, in this order, its ancestry reaches
//     the root process of P's live pane; or its session id (getsid) is
//     that root process (every pane is its own session); or its initial
//     environment (/proc/PID/environ) carries MUSTER_SURFACE_ID of a
//     surface of P, live or not (a background job that outlived its pane).
//   - Each op of proto.Ops declares its access rule, and gate (daemon.go)
//     applies it. A peer inside a pane may run the ReadOnly ops (status,
//     ls, wait, attention, explain: orchestration needs them) and the
//     OwnPane ops on P itself and on the sessions descended from P: send,
//     capture, kill, rename and ack; new (the session is recorded as P's
//     child); native_capture (for P only, with P's capability besides).
//   - The Outside ops (stop, resume, attach) and ack --all are refused
//     from inside a pane, and so is every op not in the table.
//   - Refusals carry proto.CodeForbidden.
//   - A peer whose process cannot be read (it died, or lives in a pid
//     namespace the daemon cannot see) is treated as inside an unknown
//     pane: read-only.
//
// This is not a sandbox. A same-user process that double-forks, calls
// setsid and execs itself with a clean environment leaves the pane's
// ancestry, session and environment behind; one that ptraces the user's
// shell can act as the user. The README's security section says so.

// peerWhere is what the daemon knows about a control connection's peer.
type peerWhere struct {
	pid int
	// inPane is false for a process outside every pane: the user's own
	// terminal, a script, a service.
	inPane bool
	// sessionID and name are the session of the pane the peer runs in;
	// both "" when the peer could not be identified.
	sessionID, name string
	// how says which evidence placed the peer: "ancestry", "session",
	// "environment" or "unidentified"; it goes to the log.
	how string
}

func (p peerWhere) String() string {
	if !p.inPane {
		return fmt.Sprintf("pid %d outside muster", p.pid)
	}
	return fmt.Sprintf("pid %d inside pane %q (%s)", p.pid, p.name, p.how)
}

// procTree reads what the classification needs about live processes.
type procTree interface {
	// parent returns pid's parent process id.
	parent(pid int) (int, error)
	// session returns pid's session id (getsid).
	session(pid int) (int, error)
	// environ returns the value of key in pid's initial environment, ""
	// when absent.
	environ(pid int, key string) (string, error)
}

// maxAncestry bounds the ancestry walk; real trees are a few dozen deep.
const maxAncestry = 256

// paneIndex is a snapshot of the panes the classification compares with.
type paneIndex struct {
	roots    map[int]string    // live pane root pid → session id
	surfaces map[string]string // surface id → session id, for the current surfaces
	names    map[string]string // session id → name
	// lookupSurface finds older surfaces (the store) and those of killed
	// sessions; it returns the session id and name.
	lookupSurface func(surfaceID string) (sessionID, name string, ok bool)
}

// classify decides where the process pid runs.
func classify(tree procTree, idx paneIndex, pid int) peerWhere {
	unidentified := peerWhere{pid: pid, inPane: true, how: "unidentified"}
	if pid <= 0 {
		return unidentified
	}
	in := func(sessionID, how string) peerWhere {
		return peerWhere{pid: pid, inPane: true, sessionID: sessionID, name: idx.names[sessionID], how: how}
	}
	// Ancestry, the peer itself included.
	cur := pid
	for range maxAncestry {
		if sid, ok := idx.roots[cur]; ok {
			return in(sid, "ancestry")
		}
		if cur <= 1 {
			break
		}
		pp, err := tree.parent(cur)
		if err != nil {
			if cur == pid {
				// The peer itself is gone or hidden: it cannot be placed.
				return unidentified
			}
			break
		}
		if pp == cur {
			break
		}
		cur = pp
	}
	if sid, err := tree.session(pid); err == nil {
		if s, ok := idx.roots[sid]; ok {
			return in(s, "session")
		}
	}
	if surf, err := tree.environ(pid, "MUSTER_SURFACE_ID"); err == nil && surf != "" {
		if s, ok := idx.surfaces[surf]; ok {
			return in(s, "environment")
		}
		if idx.lookupSurface != nil {
			if s, name, ok := idx.lookupSurface(surf); ok {
				return peerWhere{pid: pid, inPane: true, sessionID: s, name: name, how: "environment"}
			}
		}
	}
	return peerWhere{pid: pid}
}

// paneIndexLocked snapshots the panes for classify; d.mu is held.
func (d *Daemon) paneIndexLocked() paneIndex {
	idx := paneIndex{
		roots:    map[int]string{},
		surfaces: map[string]string{},
		names:    map[string]string{},
	}
	for id, s := range d.sessions {
		idx.names[id] = s.rec.Name
		if s.surface.ID != "" {
			idx.surfaces[s.surface.ID] = id
		}
		if s.pane != nil {
			if exited, _ := s.pane.Exited(); !exited {
				idx.roots[s.pane.PID()] = id
			}
		}
	}
	return idx
}

// whereIs classifies the process pid against the daemon's panes.
func (d *Daemon) whereIs(ctx context.Context, pid int) peerWhere {
	if d.procs == nil {
		// Nothing can be read about processes here: every peer counts as
		// outside (see the README's security section).
		return peerWhere{pid: pid}
	}
	d.mu.Lock()
	idx := d.paneIndexLocked()
	d.mu.Unlock()
	idx.lookupSurface = func(surf string) (string, string, bool) {
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
	return classify(d.procs, idx, pid)
}

// ghost remembers a killed session's surfaces for the daemon's life, so a
// process that outlived the pane is still known to come from it.
type ghost struct{ sessionID, name string }

// mayDriveLocked reports whether a peer may act on s (send, capture, kill,
// rename, ack): any peer outside the panes, or a peer inside s's pane or
// the pane of one of s's ancestors. d.mu is held.
func (d *Daemon) mayDriveLocked(p peerWhere, s *session) error {
	if !p.inPane {
		return nil
	}
	if p.sessionID != "" {
		cur := s
		for range maxAncestry {
			if cur.rec.ID == p.sessionID {
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

// forbiddenLocked builds the one refusal a peer inside a pane gets. d.mu is
// held.
func (d *Daemon) forbiddenLocked(p peerWhere, what, hint string) error {
	return &proto.Error{
		Code:    proto.CodeForbidden,
		Message: "refused: this process runs inside " + d.paneNameLocked(p) + "; " + what,
		Hint:    hint,
	}
}

// paneNameLocked names the pane a peer runs in, as of now. d.mu is held.
func (d *Daemon) paneNameLocked(p peerWhere) string {
	if s, ok := d.sessions[p.sessionID]; ok {
		return fmt.Sprintf("muster pane %q", s.rec.Name)
	}
	if p.name != "" {
		return fmt.Sprintf("muster pane %q (closed)", p.name)
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
		return "attaching from inside a pane would nest muster clients",
			"attach from a terminal outside muster; from here, `muster capture` and `muster send` work on the sessions this pane started"
	case "ack":
		return "it may not acknowledge every attention item", "acknowledge the items of this pane's own sessions by id"
	}
	return fmt.Sprintf("op %q is not allowed from a pane", strings.TrimSpace(op)), "run this from a terminal outside muster"
}
