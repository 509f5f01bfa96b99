package pane

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
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
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name may hold spaces and parentheses: the fields
		// that follow start after its last ')'. They are state, ppid,
		// pgrp and session.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 4 {
			continue
		}
		if s, err := strconv.Atoi(string(f[3])); err == nil && s == sid {
			pids = append(pids, pid)
		}
	}
	return pids
}
