package native

import (
	"time"

	"github.com/musterhq/muster/internal/procfs"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
)

// Proving which transcript is a pane's when no hook captured the session
// id (issue 10): the provider's per-process record says which session each
// process of the agent is in (provider.ProcessSessionReader: Claude Code's
// sessions/<pid>.json, the rollout a Codex TUI holds open). Without that
// proof a transcript is found by scanning the agent's directory only while
// no other pane runs the same provider there; two hook-less agents in one
// directory that cannot be proven stay coarse, until all but one of them
// are.

const (
	proveEvery = 2 * time.Second // ask the processes again (the session changes on /clear)
	maxProve   = 32              // processes of one agent asked
)

// provenID returns the session the agent's processes say they are in, ""
// when none says.
func (e *Estimator) provenID(a *agentRun, now time.Time) string {
	r, ok := all.As[provider.ProcessSessionReader](a.provider)
	if !ok {
		return ""
	}
	if now.Before(a.nextProve) {
		return a.proved
	}
	a.nextProve = now.Add(proveEvery)
	sr, shares := all.As[provider.SessionRouter](a.provider)
	for _, pid := range e.treeOf(a.pgid, maxProve) {
		if shares {
			// Codex's app-server, a child of the first TUI that needed
			// it, holds every pane's rollout open: which one it names
			// first says nothing about this pane.
			if info, err := e.inspect(pid); err == nil && sr.SharedProcess(info.Argv) {
				continue
			}
		}
		if id := r.ProcessSession(e.cfg.Env, pid); id != "" && safeID(id) {
			a.proved = id
			break
		}
	}
	// A record that says nothing this time (Claude Code rewrites its
	// sessions/<pid>.json in place, so a read can find it empty) takes
	// back nothing: the session changes only when a record names another.
	return a.proved
}

// crowded reports whether another surface's agent of the same provider
// that does not follow its own proven transcript runs in the agent's
// directory: scanning that directory could then pick the other's
// transcript. An agent settles once it follows the transcript of its known
// id, which the scan skips as taken; until then it stays in the directory
// for the others' checks, even with its id known: its transcript can
// appear between two of its own locates, and a scan in between would take
// it. An agent with a known id never needs to scan, so it is never
// crowded.
func (e *Estimator) crowded(s *surface, a *agentRun, id string) bool {
	key := a.provider + "\x00" + e.agentDir(s, a)
	e.mu.Lock()
	defer e.mu.Unlock()
	if id != "" && a.tr.path != "" && a.tr.byID == id {
		delete(e.dirs, s.ID)
		return false
	}
	e.dirs[s.ID] = key
	if id != "" {
		return false
	}
	for id, k := range e.dirs {
		if id != s.ID && k == key {
			return true
		}
	}
	return false
}

// processTree returns root and its descendants, shallowest first, at most
// max of them (Linux: /proc/PID/task/*/children; elsewhere root only).
func processTree(root, max int) []int { return procfs.FS{}.Tree(root, max) }
