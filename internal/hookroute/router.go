package hookroute

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

// Refusals. Both mean the event is answered `unauthorized`.
var (
	ErrNoPane    = errors.New("no agent pane matches the session")
	ErrAmbiguous = errors.New("more than one agent pane matches the session")
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
		return "open session file"
	case RuleBinding:
		return "earlier binding"
	case RuleResumeArgs:
		return "resume launch"
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
	agentPID int
}

// Router holds the bindings between one provider's sessions and panes. It
// is safe for concurrent use; routes are decided one at a time.
type Router struct {
	prov  provider.SessionRouter
	env   transcript.Env
	procs Procs

	mu        sync.Mutex
	files     map[string]string // session → its file, as last found
	bySession map[string]binding
	byPane    map[string]string // surface → session
}

// NewRouter returns a router for the sessions of p, whose files it finds
// under env, reading processes through procs (ProcFS{} when nil).
func NewRouter(p provider.SessionRouter, env transcript.Env, procs Procs) *Router {
	if procs == nil {
		procs = ProcFS{}
	}
	return &Router{
		prov:      p,
		env:       env,
		procs:     procs,
		files:     map[string]string{},
		bySession: map[string]binding{},
		byPane:    map[string]string{},
	}
}

// Provider returns the name of the provider whose events r routes.
func (r *Router) Provider() string { return r.prov.Name() }

// ErrNoSessionFile means no file exists (yet) for the session.
var ErrNoSessionFile = errors.New("no session file (rollout) for the session")

// sessionFile returns the session's file, remembered while it exists.
func (r *Router) sessionFile(sessionID string) (string, error) {
	if p, ok := r.files[sessionID]; ok {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := r.prov.SessionFile(r.env, sessionID)
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", fmt.Errorf("find the file of %s: %w", sessionID, ErrNoSessionFile)
	}
	r.files[sessionID] = p
	return p, nil
}

// paneInfo is a pane's live agent facts, gathered once per route.
type paneInfo struct {
	Pane
	agent []int // the agent's processes, shallowest first
	cwd   string
}

func (r *Router) inspect(panes []Pane) []paneInfo {
	var out []paneInfo
	for _, p := range panes {
		pids := AgentPIDs(r.procs, p.PID, r.prov)
		if len(pids) == 0 {
			continue // not (or no longer) an agent pane
		}
		cwd, err := r.procs.Cwd(pids[0])
		if err != nil || cwd == "" {
			cwd = p.CWD
		}
		out = append(out, paneInfo{Pane: p, agent: pids, cwd: canonical(cwd)})
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

// expire drops bindings whose pane is gone or whose agent process changed.
func (r *Router) expire(infos []paneInfo) {
	live := map[string]int{}
	for _, in := range infos {
		live[in.SurfaceID] = in.agent[0]
	}
	for sid, b := range r.bySession {
		if pid, ok := live[b.surface]; !ok || pid != b.agentPID {
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
	r.bySession[sessionID] = binding{surface: in.SurfaceID, agentPID: in.agent[0]}
	r.byPane[in.SurfaceID] = sessionID
}

// ValidSessionID reports whether id can name a session file: letters, digits, '-'
// and '_' only, so it can never escape the sessions directory or act as a
// glob.
func ValidSessionID(id string) bool {
	// By hand rather than a package-level regexp: every muster command
	// would pay for compiling it at start-up.
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// Route finds the pane of an event among the live panes. hookName is
// the provider hook that fired (rule 5 applies to SessionStart and
// UserPromptSubmit only).
func (r *Router) Route(sessionID, hookName string, panes []Pane) (Decision, error) {
	if !ValidSessionID(sessionID) {
		return Decision{}, fmt.Errorf("route event: invalid session id: %w", ErrNoPane)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	infos := r.inspect(panes)
	r.expire(infos)

	file, rerr := r.sessionFile(sessionID)
	if rerr == nil {
		// Rule 1: a pane whose own agent process has the session file open.
		want := canonical(file)
		var hits []paneInfo
		for _, in := range infos {
			if r.holds(in.agent, want) {
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

	// Rule 3: a pane launched to resume the session.
	var hits []paneInfo
	for _, in := range infos {
		if r.prov.Resumes(in.LaunchArgs, sessionID) {
			hits = append(hits, in)
		}
	}
	if d, err, done := r.pick(sessionID, hits, RuleResumeArgs); done {
		return d, err
	}

	if rerr != nil {
		return Decision{}, fmt.Errorf("route %s session %s: %w: %w", r.prov.Name(), sessionID, ErrNoPane, rerr)
	}
	meta, err := r.prov.SessionInfo(file)
	if err != nil {
		return Decision{}, fmt.Errorf("route %s session %s: %w: %w", r.prov.Name(), sessionID, ErrNoPane, err)
	}
	if !meta.Interactive {
		return Decision{}, fmt.Errorf("route %s session %s: not an interactive session (originator %q, source %q): %w",
			r.prov.Name(), sessionID, meta.Originator, meta.Source, ErrNoPane)
	}
	dir := canonical(meta.CWD)

	// Rule 4: the only unbound agent pane in the session's directory.
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
	return Decision{}, fmt.Errorf("route %s session %s: %w", r.prov.Name(), sessionID, ErrNoPane)
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
	return Decision{}, fmt.Errorf("route %s session %s by %s: %d panes: %w", r.prov.Name(), sessionID, rule, len(hits), ErrAmbiguous), true
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
