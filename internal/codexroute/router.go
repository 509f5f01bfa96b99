package codexroute

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// Refusals. Both mean the event is answered `unauthorized`.
var (
	ErrNoPane    = errors.New("no Codex pane matches the session")
	ErrAmbiguous = errors.New("more than one Codex pane matches the session")
)

// Pane is one live pane as the router sees it.
type Pane struct {
	SurfaceID  string
	PID        int      // the pane's own process: the root of its tree
	CWD        string   // the launch directory, used when the live one is unreadable
	LaunchArgs []string // argv the pane was started with
}

// Rule names which rule matched, for explain.
type Rule int

const (
	RuleOpenRollout Rule = iota + 1
	RuleBinding
	RuleResumeArgs
	RuleUnboundCwd
	RuleRebind
)

func (r Rule) String() string {
	switch r {
	case RuleOpenRollout:
		return "open rollout"
	case RuleBinding:
		return "earlier binding"
	case RuleResumeArgs:
		return "codex resume launch"
	case RuleUnboundCwd:
		return "only unbound pane in the session's directory"
	case RuleRebind:
		return "rebound pane in the session's directory"
	}
	return "none"
}

// Decision is a successful route.
type Decision struct {
	SurfaceID string
	Rule      Rule
}

type binding struct {
	surface  string
	codexPID int
}

// Router holds the bindings between Codex sessions and panes. It is safe for
// concurrent use; routes are decided one at a time.
type Router struct {
	procs  Procs
	finder *Finder

	mu        sync.Mutex
	bySession map[string]binding
	byPane    map[string]string // surface → session
}

// NewRouter returns a router reading rollouts under codexHome and processes
// through procs (ProcFS{} when nil).
func NewRouter(codexHome string, procs Procs) *Router {
	if procs == nil {
		procs = ProcFS{}
	}
	return &Router{
		procs:     procs,
		finder:    &Finder{Home: codexHome},
		bySession: map[string]binding{},
		byPane:    map[string]string{},
	}
}

// paneInfo is a pane's live Codex facts, gathered once per route.
type paneInfo struct {
	Pane
	codex []int // Codex processes, shallowest first
	cwd   string
}

func (r *Router) inspect(panes []Pane) []paneInfo {
	var out []paneInfo
	for _, p := range panes {
		pids := CodexPIDs(r.procs, p.PID)
		if len(pids) == 0 {
			continue // not (or no longer) a Codex pane
		}
		cwd, err := r.procs.Cwd(pids[0])
		if err != nil || cwd == "" {
			cwd = p.CWD
		}
		out = append(out, paneInfo{Pane: p, codex: pids, cwd: canonical(cwd)})
	}
	return out
}

// canonical cleans a directory and resolves its symlinks when it can.
func canonical(dir string) string {
	if dir == "" {
		return ""
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		return d
	}
	return filepath.Clean(dir)
}

// expire drops bindings whose pane is gone or whose Codex process changed.
func (r *Router) expire(infos []paneInfo) {
	live := map[string]int{}
	for _, in := range infos {
		live[in.SurfaceID] = in.codex[0]
	}
	for sid, b := range r.bySession {
		if pid, ok := live[b.surface]; !ok || pid != b.codexPID {
			r.unbind(sid)
		}
	}
}

func (r *Router) unbind(sessionID string) {
	if b, ok := r.bySession[sessionID]; ok {
		delete(r.bySession, sessionID)
		if r.byPane[b.surface] == sessionID {
			delete(r.byPane, b.surface)
		}
	}
}

func (r *Router) bind(sessionID string, in paneInfo) {
	if old, ok := r.byPane[in.SurfaceID]; ok && old != sessionID {
		r.unbind(old)
	}
	r.unbind(sessionID)
	r.bySession[sessionID] = binding{surface: in.SurfaceID, codexPID: in.codex[0]}
	r.byPane[in.SurfaceID] = sessionID
}

// Route finds the pane of a Codex event among the live panes. hookName is
// the provider hook that fired (rule 5 applies to SessionStart and
// UserPromptSubmit only).
func (r *Router) Route(sessionID, hookName string, panes []Pane) (Decision, error) {
	if !ValidSessionID(sessionID) {
		return Decision{}, fmt.Errorf("route codex event: invalid session id: %w", ErrNoPane)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	infos := r.inspect(panes)
	r.expire(infos)

	rollout, rerr := r.finder.Find(sessionID)
	if rerr == nil {
		// Rule 1: a pane whose own Codex process has the rollout open.
		want := canonical(rollout)
		var hits []paneInfo
		for _, in := range infos {
			if r.holds(in.codex, want) {
				hits = append(hits, in)
			}
		}
		if d, err, done := r.pick(sessionID, hits, RuleOpenRollout); done {
			return d, err
		}
	}

	// Rule 2: an earlier binding still standing.
	if b, ok := r.bySession[sessionID]; ok {
		return Decision{SurfaceID: b.surface, Rule: RuleBinding}, nil
	}

	// Rule 3: a pane launched with `codex resume <id>`.
	var hits []paneInfo
	for _, in := range infos {
		if resumes(in.LaunchArgs, sessionID) {
			hits = append(hits, in)
		}
	}
	if d, err, done := r.pick(sessionID, hits, RuleResumeArgs); done {
		return d, err
	}

	if rerr != nil {
		return Decision{}, fmt.Errorf("route codex session %s: %w: %w", sessionID, ErrNoPane, rerr)
	}
	meta, err := ReadMeta(rollout)
	if err != nil {
		return Decision{}, fmt.Errorf("route codex session %s: %w: %w", sessionID, ErrNoPane, err)
	}
	if !meta.Interactive() {
		return Decision{}, fmt.Errorf("route codex session %s: not an interactive session (originator %q, source %q): %w",
			sessionID, meta.Originator, meta.Source, ErrNoPane)
	}
	dir := canonical(meta.CWD)

	// Rule 4: the only unbound Codex pane in the session's directory.
	hits = hits[:0]
	var held []paneInfo
	for _, in := range infos {
		if in.cwd != dir {
			continue
		}
		if _, bound := r.byPane[in.SurfaceID]; bound {
			held = append(held, in)
		} else {
			hits = append(hits, in)
		}
	}
	if d, err, done := r.pick(sessionID, hits, RuleUnboundCwd); done {
		return d, err
	}

	// Rule 5: on a session's first hooks, the only pane in that directory,
	// held by a binding that may be out of date.
	if hookName == "SessionStart" || hookName == "UserPromptSubmit" {
		if d, err, done := r.pick(sessionID, held, RuleRebind); done {
			return d, err
		}
	}
	return Decision{}, fmt.Errorf("route codex session %s: %w", sessionID, ErrNoPane)
}

// pick applies one rule's matches: one binds, several refuse, none passes.
func (r *Router) pick(sessionID string, hits []paneInfo, rule Rule) (Decision, error, bool) {
	switch len(hits) {
	case 0:
		return Decision{}, nil, false
	case 1:
		r.bind(sessionID, hits[0])
		return Decision{SurfaceID: hits[0].SurfaceID, Rule: rule}, nil, true
	}
	return Decision{}, fmt.Errorf("route codex session %s by %s: %d panes: %w", sessionID, rule, len(hits), ErrAmbiguous), true
}

func (r *Router) holds(pids []int, path string) bool {
	for _, pid := range pids {
		files, err := r.procs.OpenFiles(pid)
		if err != nil {
			continue
		}
		for _, f := range files {
			if f == path {
				return true
			}
		}
	}
	return false
}

// resumes reports whether argv runs `codex … resume … <id>`; a shell
// command line among the arguments is split into words.
func resumes(argv []string, id string) bool {
	var words []string
	for _, a := range argv {
		words = append(words, strings.Fields(a)...)
	}
	for i, a := range words {
		if a != "resume" {
			continue
		}
		for _, b := range words[i+1:] {
			if b == id {
				return true
			}
		}
		return false
	}
	return false
}

// PaneClosed ends the binding of a closed pane.
func (r *Router) PaneClosed(surfaceID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sid, ok := r.byPane[surfaceID]; ok {
		r.unbind(sid)
	}
}

// Binding returns the pane a session is bound to, if any.
func (r *Router) Binding(sessionID string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.bySession[sessionID]
	return b.surface, ok
}
