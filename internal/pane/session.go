package pane

import (
	"syscall"

	"github.com/musterhq/muster/internal/procfs"
)

// signalSession signals every process of the pane's terminal session, not
// only the program's process group: a job the pane's shell started (an
// agent typed at its prompt) has a process group of its own, may ignore
// SIGHUP, and while it holds the terminal open the pane's reader never
// sees the end of its output. A session id stays reserved while any member
// lives, so a process found here is the pane's even after its leader was
// reaped. The signals go in order to each member, from one walk of /proc:
// a walk reads every process's stat, and with 50 panes stopping a walk per
// signal was a fifth of the daemon's CPU.
func (p *Pane) signalSession(sigs ...syscall.Signal) {
	for _, pid := range sessionMembers(p.pid) {
		for _, sig := range sigs {
			syscall.Kill(pid, sig)
		}
	}
}

// sessionMembers lists the processes whose session id is sid, read from
// /proc; none where /proc is missing.
func sessionMembers(sid int) []int {
	var pids []int
	procfs.FS{}.Each(func(st procfs.Stat) {
		if st.Session == sid {
			pids = append(pids, st.PID)
		}
	})
	return pids
}
