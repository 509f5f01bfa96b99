package daemon

import (
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Limits on control.sock. Without them 1,500 idle connections once used up
// the daemon's file descriptors and both sockets stopped answering.
const (
	// defaultMaxControlConns bounds open control connections; lowered to a
	// quarter of RLIMIT_NOFILE where that is small.
	defaultMaxControlConns = 256
	// maxControlConnsPerPID bounds one process's connections; its own
	// oldest idle one makes room for its next.
	maxControlConnsPerPID = 32
	// controlIdleTimeout closes a connection that sends no request for
	// this long between requests. wait and attach are exempt.
	controlIdleTimeout = time.Minute
	// controlWriteTimeout bounds writing one response to a client that
	// does not read.
	controlWriteTimeout = 10 * time.Second
)

// ctlConn is one open control connection.
type ctlConn struct {
	conn *net.UnixConn
	pid  int
	// seq orders connections by when they last went idle: the oldest idle
	// connection is dropped first.
	seq      uint64
	idle     bool
	longLive bool
	closed   bool
}

// connTable caps control connections: per peer process and in total, with
// a share kept for short requests so that long-lived waits and attaches
// cannot take every slot. When a new connection would pass a cap, the
// oldest idle connection (of the same process, for the per-process cap)
// is closed to make room; when none is idle the new one is refused.
type connTable struct {
	mu          sync.Mutex
	max, perPID int
	maxLong     int
	seq         uint64
	conns       map[*ctlConn]struct{}
	byPID       map[int]int
	long        int
}

func newConnTable(max, perPID int) *connTable {
	return &connTable{
		max: max, perPID: perPID, maxLong: max / 2,
		conns: map[*ctlConn]struct{}{}, byPID: map[int]int{},
	}
}

// controlConnLimit is the total cap for this process's file limit.
func controlConnLimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err == nil && rl.Cur > 0 && rl.Cur/4 < defaultMaxControlConns {
		return max(int(rl.Cur/4), 16)
	}
	return defaultMaxControlConns
}

// admit registers a new connection, closing older idle ones to make room.
// It returns nil when the connection cannot be admitted.
func (t *connTable) admit(conn *net.UnixConn, pid int) *ctlConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	if pid > 0 && t.byPID[pid] >= t.perPID {
		if !t.evictLocked(func(c *ctlConn) bool { return c.pid == pid }) {
			return nil
		}
	}
	if len(t.conns) >= t.max {
		if !t.evictLocked(func(*ctlConn) bool { return true }) {
			return nil
		}
	}
	t.seq++
	c := &ctlConn{conn: conn, pid: pid, seq: t.seq, idle: true}
	t.conns[c] = struct{}{}
	t.byPID[pid]++
	return c
}

// evictLocked closes the oldest idle connection that match accepts.
func (t *connTable) evictLocked(match func(*ctlConn) bool) bool {
	var oldest *ctlConn
	for c := range t.conns {
		if c.idle && match(c) && (oldest == nil || c.seq < oldest.seq) {
			oldest = c
		}
	}
	if oldest == nil {
		return false
	}
	t.removeLocked(oldest)
	oldest.conn.Close()
	return true
}

// evictIdle closes the oldest idle connection of any process, to free a
// file descriptor when accept runs out of them.
func (t *connTable) evictIdle() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.evictLocked(func(*ctlConn) bool { return true })
}

func (t *connTable) removeLocked(c *ctlConn) {
	if c.closed {
		return
	}
	c.closed = true
	delete(t.conns, c)
	if t.byPID[c.pid]--; t.byPID[c.pid] <= 0 {
		delete(t.byPID, c.pid)
	}
	if c.longLive {
		t.long--
	}
}

// remove forgets a connection whose handler has ended; it is idempotent.
func (t *connTable) remove(c *ctlConn) {
	t.mu.Lock()
	t.removeLocked(c)
	t.mu.Unlock()
}

// setIdle marks a connection as waiting for its next request (evictable)
// or as handling one.
func (t *connTable) setIdle(c *ctlConn, idle bool) {
	t.mu.Lock()
	if idle && !c.idle {
		t.seq++
		c.seq = t.seq
	}
	c.idle = idle
	t.mu.Unlock()
}

// longLived marks a connection as serving wait or attach for as long as
// the client stays. It reports false when too many already do.
func (t *connTable) longLived(c *ctlConn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.longLive || c.closed {
		return !c.closed
	}
	if t.long >= t.maxLong {
		return false
	}
	c.longLive, c.idle = true, false
	t.long++
	return true
}

// count returns the open connections, for tests.
func (t *connTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// logLimiter lets one line through per interval and counts the rest, for
// errors that can repeat in a tight loop (accept failing for want of file
// descriptors).
type logLimiter struct {
	every      time.Duration
	last       time.Time
	suppressed int
}

// allow reports whether to log now and how many lines were dropped since
// the last one that was.
func (l *logLimiter) allow(now time.Time) (bool, int) {
	if !l.last.IsZero() && now.Sub(l.last) < l.every {
		l.suppressed++
		return false, 0
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return true, n
}
