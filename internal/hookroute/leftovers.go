package hookroute

import (
	"context"
	"os"
	"slices"
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
type Leftovers struct {
	procs Procs
	provs []AgentMatcher
	// Grace is how long a signalled process has to exit before SIGKILL.
	Grace time.Duration

	mu   sync.Mutex
	held []leftover
}

type leftover struct {
	pid   int
	start string // the process's start time, so a reused pid is not hit
	prov  AgentMatcher
	exe   string
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
		l.mu.Lock()
		none := len(l.held) == 0
		l.mu.Unlock()
		if none {
			continue
		}
		if got := l.Reap(rs); len(got) > 0 && ended != nil {
			ended(got)
		}
	}
}

// note records the shared processes in the tree rooted at root.
func (l *Leftovers) note(root int) {
	for _, p := range l.provs {
		for _, pid := range SharedPIDs(l.procs, root, p) {
			st := startTime(pid)
			if st == "" {
				continue
			}
			l.mu.Lock()
			dup := false
			for _, h := range l.held {
				dup = dup || h.pid == pid && h.start == st
			}
			if !dup {
				_, exe, _ := l.procs.Name(pid)
				l.held = append(l.held, leftover{pid: pid, start: st, prov: p, exe: exe})
			}
			l.mu.Unlock()
		}
	}
}

// Reap ends the noted processes of each provider that no live pane (roots:
// their processes) runs an agent of, and forgets those that are gone. It
// returns the processes it signalled.
func (l *Leftovers) Reap(roots []int) []int {
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
		ended = append(ended, l.endCompanions(h, ended)...)
	}
	l.mu.Lock()
	l.held = append(l.held, keep...)
	l.mu.Unlock()
	return ended
}

// endCompanions ends the shared processes run from the same agent
// executable as h, once h is ended: Codex 0.171's app-server starts its
// pid-update-loop with PPID 1, out of every pane's tree, so it is never
// noted, and it outlived its daemon by more than 50 s in 1 of 6 realcli
// runs (TestMusterCodexDaemonExits). An executable that is not the
// agent's own (an interpreter running a script) names no family, so it
// ends nothing here.
func (l *Leftovers) endCompanions(h leftover, done []int) []int {
	if h.exe == "" || !h.prov.IsAgentProcess("", h.exe) {
		return nil
	}
	pids, err := procfs.FS{}.PIDs()
	if err != nil {
		return nil
	}
	var ended []int
	for _, pid := range pids {
		if slices.Contains(done, pid) || pid == os.Getpid() {
			continue
		}
		if _, exe, err := l.procs.Name(pid); err != nil || exe != h.exe {
			continue
		}
		argv, err := l.procs.Cmdline(pid)
		if err != nil || !h.prov.SharedProcess(argv) {
			continue
		}
		st := startTime(pid)
		if st == "" {
			continue
		}
		l.end(leftover{pid: pid, start: st, prov: h.prov, exe: h.exe})
		ended = append(ended, pid)
	}
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
