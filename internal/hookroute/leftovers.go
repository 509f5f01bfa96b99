package hookroute

import (
	"context"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/musterhq/muster/internal/procfs"
)

// Leftovers ends the shared processes a pane started (Codex's app-server
// daemon and its pid-update-loop, which Codex 0.169 starts as children of
// the first TUI and which survive it in a session of their own) once no
// pane runs an agent of their provider any more: `muster kill` of the
// panes must not leave them running, and they must not be killed while
// another pane's agent may still be their client. Codex's own `codex
// app-server daemon stop` only logs shutdown_requested, so they are
// signalled: SIGTERM, then SIGKILL after Grace.
//
// A shared process is known in two ways: it is met in a pane's tree
// (PaneClosing, and Watch's walk of the live panes), or it carries Mark in
// its environment, which it inherited from the pane that started it. The
// tree alone misses some: Codex 0.171 runs its app-server and the
// pid-update-loop with PPID 1 within milliseconds, so a walk every 3 s
// never met either in 1 of 6 realcli runs, and both outlived every pane.
type Leftovers struct {
	procs Procs
	provs []AgentMatcher
	// Grace is how long a signalled process has to exit before SIGKILL.
	Grace time.Duration
	// Mark, when its Key is set, is the variable every pane of this
	// daemon has in its environment and no other process has (the
	// daemon's own events socket): a shared process that carries it
	// was started from one of our panes, wherever it now hangs.
	Mark EnvVar

	mu   sync.Mutex
	held []leftover
}

// EnvVar is one variable of a process's environment.
type EnvVar struct{ Key, Value string }

type leftover struct {
	pid   int
	start string // the process's start time, so a reused pid is not hit
	prov  AgentMatcher
}

// NewLeftovers returns Leftovers for the given providers, reading
// processes through procs (ProcFS{} when nil).
func NewLeftovers(procs Procs, provs ...AgentMatcher) *Leftovers {
	if procs == nil {
		procs = ProcFS{}
	}
	return &Leftovers{procs: procs, provs: provs, Grace: 2 * time.Second}
}

// PaneClosing notes the shared processes in the tree of a pane about to be
// closed (root is its process), before closing orphans them.
func (l *Leftovers) PaneClosing(root int) { l.note(root) }

// DefaultWatch is how often Watch looks at the live panes.
const DefaultWatch = 3 * time.Second

// Watch notes the shared processes in the trees of the live panes (roots
// returns their processes) every interval and ends, with Reap, those that
// no live pane's agent may use any more, until ctx ends. A Codex TUI that
// exits by itself (/exit, Ctrl-C) leaves its app-server running in a
// session of its own, out of the pane's tree and out of `muster kill`'s
// reach: it has to be noted while the TUI that started it runs, and ended
// once no pane runs Codex. ended, when set, gets what each Reap ended.
func (l *Leftovers) Watch(ctx context.Context, interval time.Duration, roots func() []int, ended func([]int)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rs := roots()
		for _, r := range rs {
			l.note(r)
		}
		l.noteMarked()
		l.mu.Lock()
		none := len(l.held) == 0
		l.mu.Unlock()
		if none {
			continue
		}
		if got := l.reap(rs); len(got) > 0 && ended != nil {
			ended(got)
		}
	}
}

// note records the shared processes in the tree rooted at root.
func (l *Leftovers) note(root int) {
	for _, p := range l.provs {
		for _, pid := range SharedPIDs(l.procs, root, p) {
			l.hold(pid, p)
		}
	}
}

// noteMarked records the shared processes, wherever they hang, that carry
// Mark. It reads each process's name and executable (8.5 µs a process,
// BenchmarkNoteMarked: 3.4 ms for 400 processes every 3 s, about 0.1% of
// a core) and the command line and environment only of an agent's.
func (l *Leftovers) noteMarked() {
	if l.Mark.Key == "" || len(l.provs) == 0 {
		return
	}
	pids, err := l.procs.PIDs()
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, pid := range pids {
		if pid == self {
			continue
		}
		comm, exe, err := l.procs.Name(pid)
		if err != nil {
			continue
		}
		for _, p := range l.provs {
			if !p.IsAgentProcess(comm, exe) {
				continue
			}
			if argv, err := l.procs.Cmdline(pid); err != nil || !p.SharedProcess(argv) {
				continue
			}
			if v, err := l.procs.Environ(pid, l.Mark.Key); err == nil && v == l.Mark.Value {
				l.hold(pid, p)
			}
			break
		}
	}
}

// hold records pid as a shared process of p, once.
func (l *Leftovers) hold(pid int, p AgentMatcher) {
	st := startTime(pid)
	if st == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range l.held {
		if h.pid == pid && h.start == st {
			return
		}
	}
	l.held = append(l.held, leftover{pid: pid, start: st, prov: p})
}

// Reap ends the noted processes of each provider that no live pane (roots:
// their processes) runs an agent of, and forgets those that are gone. It
// returns the processes it signalled. The marked processes are noted
// first, so a pane killed between two of Watch's walks leaves nothing.
func (l *Leftovers) Reap(roots []int) []int {
	l.noteMarked()
	return l.reap(roots)
}

func (l *Leftovers) reap(roots []int) []int {
	l.mu.Lock()
	held := l.held
	l.held = nil
	l.mu.Unlock()
	busy := map[AgentMatcher]bool{}
	var keep []leftover
	var ended []int
	for _, h := range held {
		if startTime(h.pid) != h.start {
			continue // exited (or the pid was reused)
		}
		b, ok := busy[h.prov]
		if !ok {
			for _, r := range roots {
				if len(AgentPIDs(l.procs, r, h.prov)) > 0 {
					b = true
					break
				}
			}
			busy[h.prov] = b
		}
		if b {
			keep = append(keep, h)
			continue
		}
		l.end(h)
		ended = append(ended, h.pid)
	}
	l.mu.Lock()
	l.held = append(l.held, keep...)
	l.mu.Unlock()
	return ended
}

func (l *Leftovers) end(h leftover) {
	if err := syscall.Kill(h.pid, syscall.SIGTERM); err != nil {
		return
	}
	deadline := time.Now().Add(l.Grace)
	for time.Now().Before(deadline) {
		if startTime(h.pid) != h.start {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	if startTime(h.pid) == h.start {
		syscall.Kill(h.pid, syscall.SIGKILL)
	}
}

// startTime is when pid started (procfs.Stat.StartTime, as text), ""
// when the process is gone or a zombie: with the pid it names one
// process, so a reused pid is never signalled.
func startTime(pid int) string {
	st, err := procfs.FS{}.Stat(pid)
	if err != nil || st.Zombie() {
		return ""
	}
	return strconv.FormatUint(st.StartTime, 10)
}
