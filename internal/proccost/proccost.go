// Package proccost measures what each pane's process tree costs the
// machine: resident memory (RSS, and PSS where the kernel lets Muster read
// it) and CPU. One Sample reads every process's /proc/PID/stat once for
// all panes together (through internal/procfs), builds the parent map and
// gives each process to the pane whose root it descends from, so the cost
// of sampling grows with the machine's processes, not with panes ×
// processes.
package proccost

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/musterhq/muster/internal/procfs"
)

// Cost is one pane's process tree at one sample.
type Cost struct {
	// RSSBytes is the tree's resident memory, summed over its processes
	// (shared pages count once per process, as top's RES does).
	RSSBytes int64
	// PSSBytes is the tree's proportional share of memory, from
	// smaps_rollup; 0 where unreadable (another user's process, an old
	// kernel) or not read yet.
	PSSBytes int64
	// CPUPercent is the tree's CPU time over the last interval as a share
	// of one core (200 is two cores busy); -1 before a second sample.
	CPUPercent float64
	// Processes counts the tree's processes.
	Processes int
}

// procStat is what one /proc/PID/stat line says.
type procStat struct {
	ppid      int
	startTime uint64 // clock ticks since boot: tells a reused pid apart
	ticks     uint64 // utime+stime+cutime+cstime
	rssPages  int64
}

type procKey struct {
	pid   int
	start uint64
}

type seen struct {
	ticks uint64
	ppid  int
	root  int
}

// Sampler keeps what the previous sample saw, to turn CPU ticks into a
// rate. It is not safe for concurrent use.
type Sampler struct {
	// Proc is the proc file system's root (the system's when empty).
	Proc string
	// PSSEvery reads smaps_rollup on one sample in PSSEvery (0 or 1:
	// every sample): the kernel walks each process's page tables to
	// answer it, by far the dearest part of a sample.
	PSSEvery int

	prev    map[procKey]seen
	prevAt  time.Time
	pss     map[procKey]int64
	samples int
	buf     []byte
}

var (
	pageSize  = int64(os.Getpagesize())
	clockTick = 100.0 // USER_HZ on every Linux this runs on
)

// ErrUnsupported is returned where there is no /proc to read.
var ErrUnsupported = errors.New("proccost: no /proc on this system")

// Sample measures the process tree of each root pid (the pane's process)
// at now. roots maps a key of the caller's (a surface id) to the pid; a
// root that no longer exists gets no entry.
func (s *Sampler) Sample(roots map[string]int, now time.Time) (map[string]Cost, error) {
	fs := procfs.FS{Root: s.Proc}
	if s.buf == nil {
		s.buf = make([]byte, 1024)
	}
	stats := map[int]procStat{}
	err := fs.Each(func(st procfs.Stat) {
		stats[st.PID] = procStat{ppid: st.PPID, startTime: st.StartTime,
			ticks: st.UTime + st.STime + st.CUTime + st.CSTime, rssPages: st.RSSPages}
	})
	if err != nil {
		return nil, ErrUnsupported
	}
	rootOf := make(map[int]string, len(roots))
	for key, pid := range roots {
		if _, ok := stats[pid]; ok {
			rootOf[pid] = key
		}
	}
	// owner memoizes each pid's pane root (0: none) so a deep tree is
	// walked once; the parent chain is bounded by the process count to
	// survive a cycle that a racing read of /proc could show.
	owner := make(map[int]int, len(stats))
	find := func(pid int) int {
		chain := make([]int, 0, 8)
		root := 0
		for p := pid; p > 1 && len(chain) <= len(stats); {
			if r, ok := owner[p]; ok {
				root = r
				break
			}
			chain = append(chain, p)
			if _, ok := rootOf[p]; ok {
				root = p
				break
			}
			st, ok := stats[p]
			if !ok {
				break
			}
			p = st.ppid
		}
		for _, p := range chain {
			owner[p] = root
		}
		return root
	}
	readPSS := s.PSSEvery <= 1 || s.samples%s.PSSEvery == 0
	s.samples++
	if readPSS {
		s.pss = make(map[procKey]int64, len(s.pss))
	}
	costs := make(map[string]Cost, len(rootOf))
	cpu := make(map[int]int64, len(rootOf)) // root pid → ticks this interval
	next := make(map[procKey]seen, len(s.prev))
	for pid, st := range stats {
		root := find(pid)
		if root == 0 {
			continue
		}
		key := rootOf[root]
		c := costs[key]
		c.Processes++
		c.RSSBytes += st.rssPages * pageSize
		k := procKey{pid, st.startTime}
		if readPSS {
			if v, ok := readPSSBytes(fs, pid, s.buf); ok {
				s.pss[k] = v
			}
		}
		c.PSSBytes += s.pss[k]
		costs[key] = c
		next[k] = seen{ticks: st.ticks, ppid: st.ppid, root: root}
		if p, ok := s.prev[k]; ok {
			cpu[root] += int64(st.ticks) - int64(p.ticks)
		} else if !s.prevAt.IsZero() {
			// Born during the interval: all its time is this interval's.
			cpu[root] += int64(st.ticks)
		}
	}
	// A process that ended and was reaped inside the tree handed its whole
	// life's time to its parent's cutime; what the earlier samples already
	// counted of it must not count again.
	for k, p := range s.prev {
		if _, ok := next[k]; ok || p.root == 0 {
			continue
		}
		if _, still := rootOf[p.root]; !still {
			continue
		}
		if parent, ok := stats[p.ppid]; ok && owner[p.ppid] == p.root {
			pk := procKey{p.ppid, parent.startTime}
			if pp, ok := s.prev[pk]; ok {
				grew := int64(parent.ticks) - int64(pp.ticks)
				cpu[p.root] -= min(int64(p.ticks), max(grew, 0))
			}
		}
	}
	elapsed := now.Sub(s.prevAt).Seconds()
	for pid, key := range rootOf {
		c, ok := costs[key]
		if !ok {
			continue
		}
		c.CPUPercent = -1
		if !s.prevAt.IsZero() && elapsed > 0 {
			c.CPUPercent = float64(max(cpu[pid], 0)) / clockTick / elapsed * 100
		}
		costs[key] = c
	}
	s.prev, s.prevAt = next, now
	return costs, nil
}

// readPSSBytes reads the Pss line of a smaps_rollup file.
func readPSSBytes(fs procfs.FS, pid int, buf []byte) (int64, bool) {
	n, err := fs.ReadInto(pid, "smaps_rollup", buf)
	if err != nil {
		return 0, false
	}
	b := buf[:n]
	i := bytes.Index(b, []byte("\nPss:"))
	if i < 0 {
		return 0, false
	}
	line := b[i+len("\nPss:"):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	f := bytes.Fields(line)
	if len(f) != 2 || string(f[1]) != "kB" {
		return 0, false
	}
	kb, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil {
		return 0, false
	}
	return kb * 1024, true
}

// FormatBytes writes a size the way ls and the dashboard show it: 1024-
// based, one decimal under 10 (512K, 1.5G, 24G).
func FormatBytes(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%dB", n)
	}
	v, u := float64(n)/1024, 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v < 10 {
		return fmt.Sprintf("%.1f%c", v, units[u])
	}
	return fmt.Sprintf("%.0f%c", v, units[u])
}
