package panepeer

import (
	"fmt"
	"hash/maphash"
	"sync"
)

// Where is what is known of a peer process.
type Where struct {
	PID int
	// InPane is false for a process outside every pane: the user's own
	// terminal, a script, a service.
	InPane bool
	// SessionID and Name are the Muster session of the pane the process
	// runs in; both "" when it could not be identified.
	SessionID, Name string
	// Control is set by the daemon when that pane is a control pane, the
	// user's own: its processes act as the user does outside the panes.
	Control bool
	// How says which evidence placed the process: "ancestry", "session",
	// "environment" or "unidentified"; it goes to the log.
	How string
}

func (w Where) String() string {
	if !w.InPane {
		return fmt.Sprintf("pid %d outside muster", w.PID)
	}
	return fmt.Sprintf("pid %d inside pane %q (%s)", w.PID, w.Name, w.How)
}

// Unidentified is a peer that could not be placed.
func Unidentified(pid int) Where { return Where{PID: pid, InPane: true, How: "unidentified"} }

// Stat is what the classification reads of one process.
type Stat struct {
	PPID, SID int // parent process id, session id (getsid)
}

// Procs reads what the classification needs about live processes.
type Procs interface {
	// Stat reads pid's parent and session.
	Stat(pid int) (Stat, error)
	// Session returns pid's session id alone, as cheaply as the system
	// allows (getsid).
	Session(pid int) (int, error)
	// Environ returns the value of key in pid's initial environment, ""
	// when absent.
	Environ(pid int, key string) (string, error)
}

// MaxAncestry bounds the ancestry walk; real trees are a few dozen deep.
const MaxAncestry = 256

// Index is a snapshot of the panes a classification compares with.
type Index struct {
	Roots    map[int]string    // live pane root pid → session id
	Surfaces map[string]string // surface id → session id, for the current surfaces
	Names    map[string]string // session id → name
	// LookupSurface finds older surfaces (the store) and those of killed
	// sessions; it returns the session id and name. It may be nil.
	LookupSurface func(surfaceID string) (sessionID, name string, ok bool)
	// Generation changes whenever what LookupSurface finds changes (a
	// session is killed); Cache compares it with Roots and Surfaces.
	Generation uint64
}

// version identifies the panes and surfaces of idx: equal indexes have
// equal versions, and different ones almost surely differ.
func (idx Index) version() uint64 {
	var sum uint64
	for pid, s := range idx.Roots {
		sum += mix(uint64(pid)) ^ maphash.String(seed, s) // order-independent
	}
	for surf, s := range idx.Surfaces {
		sum += maphash.String(seed, surf) ^ mix(maphash.String(seed, s))
	}
	return sum ^ mix(idx.Generation+1)
}

var seed = maphash.MakeSeed()

// mix is SplitMix64's finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Classify decides where the process pid runs.
func Classify(procs Procs, idx Index, pid int) Where {
	if pid <= 0 {
		return Unidentified(pid)
	}
	st, err := procs.Stat(pid)
	if err != nil {
		// The peer itself is gone or hidden: it cannot be placed.
		return Unidentified(pid)
	}
	return classify(procs, idx, pid, st)
}

func classify(procs Procs, idx Index, pid int, st Stat) Where {
	in := func(sessionID, how string) Where {
		return Where{PID: pid, InPane: true, SessionID: sessionID, Name: idx.Names[sessionID], How: how}
	}
	// The session first, because it is already read, and it is the usual
	// case: a hook of the agent in its own pane. It cannot contradict the
	// ancestry: a process is in a pane's session only by descending from
	// that pane's root, and pane roots descend from no other pane.
	if s, ok := idx.Roots[st.SID]; ok {
		return in(s, "session")
	}
	// Ancestry, the peer itself included.
	cur, next := pid, st.PPID
	for range MaxAncestry {
		if s, ok := idx.Roots[cur]; ok {
			return in(s, "ancestry")
		}
		if cur <= 1 || next <= 0 || next == cur {
			break
		}
		cur = next
		a, err := procs.Stat(cur)
		if err != nil {
			next = cur // an ancestor gone meanwhile: the walk ends at it
			continue
		}
		next = a.PPID
	}
	if surf, err := procs.Environ(pid, "MUSTER_SURFACE_ID"); err == nil && surf != "" {
		if s, ok := idx.Surfaces[surf]; ok {
			return in(s, "environment")
		}
		if idx.LookupSurface != nil {
			if s, name, ok := idx.LookupSurface(surf); ok {
				return Where{PID: pid, InPane: true, SessionID: s, Name: name, How: "environment"}
			}
		}
	}
	return Where{PID: pid}
}

// Cache places the processes of a socket that classifies every request
// (events.sock) cheaply: a process in a pane's own session (a hook of the
// pane's agent) with one getsid call, and a process seen before (a
// long-lived client) with one getsid call and a lookup.
//
// An entry is kept for a pid while the process with that pid is in the same
// session, and only while the Index's roots, surfaces and Generation are
// those it was made with. While the panes do not change, that is the same
// answer Classify would give, but for a process that reuses the pid of a
// process of the same session that left its pane's tree: only a process
// that could itself have escaped its pane (see the package doc) can
// arrange that.
type Cache struct {
	procs Procs
	mu    sync.Mutex
	ver   uint64
	m     map[int]cached
}

type cached struct {
	sid   int
	where Where
}

// maxCached bounds the cache; it is emptied when full.
const maxCached = 4096

// NewCache returns a cache over procs.
func NewCache(procs Procs) *Cache { return &Cache{procs: procs, m: map[int]cached{}} }

// Classify is Classify through the cache.
func (c *Cache) Classify(idx Index, pid int) Where {
	if pid <= 0 {
		return Unidentified(pid)
	}
	sid, err := c.procs.Session(pid)
	if err != nil {
		return Unidentified(pid)
	}
	if s, ok := idx.Roots[sid]; ok {
		return Where{PID: pid, InPane: true, SessionID: s, Name: idx.Names[s], How: "session"}
	}
	version := idx.version()
	c.mu.Lock()
	e, ok := c.m[pid]
	fresh := ok && c.ver == version && e.sid == sid
	c.mu.Unlock()
	if fresh {
		return e.where
	}
	st, err := c.procs.Stat(pid)
	if err != nil {
		return Unidentified(pid)
	}
	w := classify(c.procs, idx, pid, st)
	c.mu.Lock()
	if c.ver != version || len(c.m) >= maxCached {
		clear(c.m)
		c.ver = version
	}
	c.m[pid] = cached{st.SID, w}
	c.mu.Unlock()
	return w
}
