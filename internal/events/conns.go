package events

import (
	"container/list"
	"net"
	"sync"
)

// conns tracks the open connections of events.sock to hold them to
// Config.MaxConns in all and Config.MaxConnsPerPeer per peer process. A
// connection is idle until its whole request has been read; when a cap is
// reached, the oldest idle connection (of that peer, or of anyone) is
// closed to make room, so that idle or slow clients cannot keep a real hook
// out. A connection whose request has been read is never dropped; when all
// are past that point the new connection is refused instead.
type conns struct {
	maxTotal, maxPeer int

	mu    sync.Mutex
	open  int
	idle  list.List // *conn, oldest first
	peers map[int]*peer
}

type peer struct {
	open int
	idle list.List // *conn, oldest first
}

// conn is one tracked connection.
type conn struct {
	c              *net.UnixConn
	pid            int
	idleEl, peerEl *list.Element // nil once busy or dropped
	dropped        bool
}

func newConns(maxTotal, maxPeer int) *conns {
	return &conns{maxTotal: maxTotal, maxPeer: maxPeer, peers: map[int]*peer{}}
}

// admit tracks a new connection from peer process pid (0: unknown), first
// dropping the oldest idle connection of the peer, or of anyone, when a
// cap is reached. It reports false when there was none to drop: the caller
// closes c unanswered. dropped counts the connections it closed.
func (t *conns) admit(c *net.UnixConn, pid int) (cn *conn, dropped int, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.peers[pid]
	if p == nil {
		p = &peer{}
		t.peers[pid] = p
	}
	if p.open >= t.maxPeer {
		if !t.dropOldest(&p.idle) {
			t.forget(pid, p)
			return nil, 0, false
		}
		dropped++
	}
	if t.open >= t.maxTotal {
		if !t.dropOldest(&t.idle) {
			t.forget(pid, p)
			return nil, dropped, false
		}
		dropped++
	}
	// A drop may have forgotten p (its last connection went).
	t.peers[pid] = p
	cn = &conn{c: c, pid: pid}
	cn.idleEl = t.idle.PushBack(cn)
	cn.peerEl = p.idle.PushBack(cn)
	p.open++
	t.open++
	return cn, dropped, true
}

// dropOldest closes the first connection of l, an idle list.
func (t *conns) dropOldest(l *list.List) bool {
	e := l.Front()
	if e == nil {
		return false
	}
	cn := e.Value.(*conn)
	t.release(cn)
	cn.dropped = true
	cn.c.Close()
	return true
}

// release stops counting cn; t.mu is held.
func (t *conns) release(cn *conn) {
	p := t.peers[cn.pid]
	if cn.idleEl != nil {
		t.idle.Remove(cn.idleEl)
		p.idle.Remove(cn.peerEl)
		cn.idleEl, cn.peerEl = nil, nil
	}
	p.open--
	t.open--
	t.forget(cn.pid, p)
}

func (t *conns) forget(pid int, p *peer) {
	if p.open == 0 {
		delete(t.peers, pid)
	}
}

// busy marks cn's request as read, so that it is no longer dropped. It
// reports false when cn was dropped first.
func (t *conns) busy(cn *conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cn.dropped {
		return false
	}
	if cn.idleEl != nil {
		t.idle.Remove(cn.idleEl)
		t.peers[cn.pid].idle.Remove(cn.peerEl)
		cn.idleEl, cn.peerEl = nil, nil
	}
	return true
}

// done stops tracking cn once its handler is finished with it.
func (t *conns) done(cn *conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !cn.dropped {
		t.release(cn)
		cn.dropped = true
	}
}

// counts returns the connections open in all and of one peer.
func (t *conns) counts(pid int) (total, ofPeer int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.peers[pid]; p != nil {
		ofPeer = p.open
	}
	return t.open, ofPeer
}
