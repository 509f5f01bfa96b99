package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/hookroute"
	"github.com/musterhq/muster/internal/launcher"
	"github.com/musterhq/muster/internal/nativeid"
	"github.com/musterhq/muster/internal/panepeer"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/transcript"
)

// sessionRouters makes one router per provider whose events are routed by
// session id (Codex), for events.sock.
func sessionRouters(env transcript.Env) []*hookroute.Router {
	var out []*hookroute.Router
	for _, r := range all.Capable[provider.SessionRouter]() {
		out = append(out, hookroute.NewRouter(r, env, nil))
	}
	return out
}

// newLeftovers watches the shared processes of every provider that has
// them (Codex's app-server daemon). They are known by the events socket
// every pane of this daemon names in its environment (launch): no other
// daemon's pane, and no agent the user runs outside Muster, has it.
func newLeftovers(eventSocket string) *hookroute.Leftovers {
	var ms []hookroute.AgentMatcher
	for _, r := range all.Capable[provider.SessionRouter]() {
		ms = append(ms, r)
	}
	l := hookroute.NewLeftovers(nil, ms...)
	l.Mark = hookroute.EnvVar{Key: envEventSocket, Value: eventSocket}
	return l
}

// livePanePIDs returns the processes of the panes still running.
func (d *Daemon) livePanePIDs() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []int
	for _, s := range d.sessions {
		if s.pane == nil {
			continue
		}
		if exited, _ := s.pane.Exited(); !exited {
			out = append(out, s.pane.PID())
		}
	}
	return out
}

// agentIsRoot reports whether the pane's first process is the agent itself
// rather than a managed shell.
func agentIsRoot(rec store.Session) bool {
	_, builtin := all.Launch(rec.Provider)
	return builtin && rec.ShellCommand == ""
}

// nativeCapture records the provider's own session id for a Muster session,
// after checking that it comes from inside the session's live pane and from
// the session's provider process. Two proofs are asked for, because one
// is not enough: the request must carry the pane's event capability, which
// only the pane's processes were given; and the process that connected must
// run inside that pane, because a same-user process can read another's
// capability from /proc/PID/environ.
func (d *Daemon) nativeCapture(ctx context.Context, peer func() panepeer.Where, a proto.NativeCaptureArgs) error {
	if err := nativeid.ValidSessionID(a.NativeID); err != nil {
		return proto.Errorf(proto.CodeInvalid, "%v", err)
	}
	d.mu.Lock()
	s, ok := d.sessions[a.SessionID]
	if !ok {
		d.mu.Unlock()
		return proto.Errorf(proto.CodeNotFound, "no Muster session %q", a.SessionID)
	}
	rec := s.rec
	p := s.pane
	surfaceID := s.surface.ID
	d.mu.Unlock()
	// Everything in a capture request but the capability can be read from
	// `muster ls --json` and /proc; only the pane's hooks hold the token.
	if !d.events.CheckCapability(surfaceID, a.Capability) {
		d.logger.Warn("native capture refused: wrong or missing capability", "session_id", rec.ID, "surface_id", surfaceID)
		return &proto.Error{Code: proto.CodeUnauthorized,
			Message: fmt.Sprintf("capture refused: the request does not carry the event capability of session %s's pane", rec.Name),
			Hint:    "`muster hook capture` records an id only when run by a hook inside the session's own pane"}
	}
	if d.peers != nil {
		if w := peer(); !w.InPane || w.SessionID != rec.ID {
			d.logger.Warn("native capture refused: sent from outside the session's pane", "session_id", rec.ID, "pid", w.PID, "peer_session_id", w.SessionID, "how", w.How)
			d.mu.Lock()
			defer d.mu.Unlock()
			if !w.InPane {
				return &proto.Error{Code: proto.CodeForbidden,
					Message: fmt.Sprintf("refused: this process does not run inside pane %q; only its own hooks may record its native id", rec.Name),
					Hint:    "`muster hook capture` is meant to be run by an agent's hook inside its pane"}
			}
			return d.forbiddenLocked(w, fmt.Sprintf("it may not record the native id of pane %q", rec.Name),
				"`muster hook capture` records an id only for the pane it runs in")
		}
	}
	if plainComposition(rec) {
		return &proto.Error{Code: proto.CodeInvalid,
			Message: fmt.Sprintf("capture refused: session %s runs a shell composition without --resume-cmd, so it cannot resume a native id (it restores by running its command again)", rec.Name),
			Hint:    "to resume its agent, create the session with --resume-cmd 'COMMAND {session_id}'"}
	}
	adopt := false
	if rec.Provider == provider.Shell {
		// A managed shell may run any agent; the first capture names it.
		adopt = true
	} else if err := nativeid.CheckProvider(rec.Provider, a.Provider); err != nil {
		return proto.Errorf(proto.CodeInvalid, "%v", err)
	}
	if p == nil {
		return proto.Errorf(proto.CodeExited, "session %s has no running process", rec.Name)
	}
	if exited, _ := p.Exited(); exited {
		return proto.Errorf(proto.CodeExited, "session %s has no running process", rec.Name)
	}
	if err := nativeid.CheckProcess(nativeid.ProcFS{}, p.PID(), a.PID, a.PPID, agentIsRoot(rec)); err != nil {
		return proto.Errorf(proto.CodeInvalid, "%v", err)
	}
	if adopt {
		if err := d.store.SetProvider(ctx, rec.ID, a.Provider); err != nil {
			return proto.Errorf(proto.CodeInternal, "record provider: %v", err)
		}
	}
	if err := d.store.SetNative(ctx, rec.ID, a.NativeID, true); err != nil {
		return proto.Errorf(proto.CodeInternal, "record native id: %v", err)
	}
	d.store.SetRestore(ctx, rec.ID, "", 0)
	d.mu.Lock()
	if adopt {
		s.rec.Provider = a.Provider
	}
	old := s.rec.NativeID
	s.rec.NativeID, s.rec.NativeConfirmed = a.NativeID, true
	s.rec.RestoreReason, s.rec.RestoreAttempts = "", 0
	d.mu.Unlock()
	if d.native != nil {
		// The capture is the session's own hook running (Gemini CLI's
		// SessionStart, at launch): its hooks report from now on, before
		// any prompt's transcript record could open a native run beside
		// the hook's.
		d.native.HookEventSeen(surfaceID, a.Provider)
	}
	d.stateChanged()
	d.logger.Info("native session captured", "session_id", rec.ID, "provider", a.Provider, "native_id", a.NativeID, "replaced", old != "" && old != a.NativeID)
	return nil
}

// plainComposition reports whether a session runs a shell composition
// with no resume command: a plain pane, which never records a native id.
func plainComposition(rec store.Session) bool {
	if rec.ShellCommand == "" {
		return false
	}
	_, err := launcher.ResumeTemplate(rec.ShellCommand, rec.ResumeTemplate)
	return errors.Is(err, launcher.ErrCompositionNeedsResume)
}

// sortedUnique orders sessions by id so that duplicates are adjacent.
func sortedUnique(ss []*session) []*session {
	slices.SortFunc(ss, func(a, b *session) int { return strings.Compare(a.rec.ID, b.rec.ID) })
	return ss
}

// restorable reports whether a session's process died with a daemon (not by
// its own exit) and so should be offered for resume.
func restorable(s *session) bool {
	if s.pane != nil {
		return false
	}
	return s.surface.EndReason == "daemon-stopped" || s.surface.EndReason == "daemon-died"
}

// maxResumeAttempts bounds automatic retries of a session whose resume keeps
// failing; naming the session explicitly still tries again.
const maxResumeAttempts = 3

// resumeBackoff is how long `resume --all` waits after a failed attempt
// before trying a session again: 2 s, 4 s, 8 s…
func resumeBackoff(attempts int) time.Duration {
	return time.Duration(1<<min(attempts, 10)) * time.Second
}

func (d *Daemon) resume(ctx context.Context, a proto.ResumeArgs) ([]proto.ResumeOutcome, error) {
	if err := proto.CheckSize(a.Cols, a.Rows); err != nil {
		return nil, err
	}
	var targets []*session
	d.mu.Lock()
	if a.All {
		for _, s := range d.sessions {
			if restorable(s) {
				targets = append(targets, s)
			}
		}
	}
	for _, n := range a.Names {
		s, err := d.lookupLocked(n)
		if err != nil {
			d.mu.Unlock()
			return nil, err
		}
		if s.pane != nil {
			if exited, _ := s.pane.Exited(); !exited {
				d.mu.Unlock()
				return nil, proto.Errorf(proto.CodeConflict, "session %q is already running", s.rec.Name)
			}
		}
		targets = append(targets, s)
	}
	d.mu.Unlock()
	targets = slices.CompactFunc(sortedUnique(targets), func(a, b *session) bool { return a == b })
	// Map order is random; resume (and report) oldest first.
	sort.SliceStable(targets, func(i, j int) bool {
		if !targets[i].rec.CreatedAt.Equal(targets[j].rec.CreatedAt) {
			return targets[i].rec.CreatedAt.Before(targets[j].rec.CreatedAt)
		}
		return targets[i].rec.Name < targets[j].rec.Name
	})
	if !a.All && len(a.Names) == 0 {
		return nil, proto.Errorf(proto.CodeBadRequest, "name a session to resume, or --all")
	}
	// Most of a resume is waiting for the pane to settle, so sessions
	// resume side by side (issue 22 item 10: 100 sessions took 150 s one
	// after another), a bounded number at a time, each outcome in its
	// place in the list.
	out := make([]proto.ResumeOutcome, len(targets))
	started := make([]bool, len(targets))
	var wg sync.WaitGroup
	sem := make(chan struct{}, resumeParallel)
	for i, s := range targets {
		d.mu.Lock()
		rec := s.rec
		d.mu.Unlock()
		if skip := skipResume(rec, a.All || a.SkipFailing); skip != "" {
			out[i], started[i] = proto.ResumeOutcome{Name: rec.Name, Reason: skip}, true
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		started[i] = true
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = d.resumeOne(ctx, s, a)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		var done []proto.ResumeOutcome
		for i, o := range out {
			if started[i] {
				done = append(done, o)
			}
		}
		return done, context.Cause(ctx)
	}
	return out, nil
}

// resumeParallel bounds the sessions one resume starts at once: each
// starts an agent CLI, which costs a burst of CPU and memory.
const resumeParallel = 8

// skipResume says why a resume chosen by --all (auto) leaves a session
// alone: it failed too often, or too recently; "" to resume it.
func skipResume(rec store.Session, auto bool) string {
	if !auto || rec.RestoreAttempts == 0 {
		return ""
	}
	if rec.RestoreAttempts >= maxResumeAttempts {
		return fmt.Sprintf("skipped after %d failed attempts: %s", rec.RestoreAttempts, rec.RestoreReason)
	}
	if wait := resumeBackoff(rec.RestoreAttempts) - time.Since(rec.UpdatedAt); wait > 0 {
		return fmt.Sprintf("last attempt failed %s ago; retrying after %s: %s",
			time.Since(rec.UpdatedAt).Round(time.Second), wait.Round(time.Second), rec.RestoreReason)
	}
	return ""
}

func (d *Daemon) resumeOne(ctx context.Context, s *session, a proto.ResumeArgs) proto.ResumeOutcome {
	d.mu.Lock()
	rec := s.rec
	if live, _ := liveLocked(s); live {
		d.mu.Unlock()
		return proto.ResumeOutcome{Name: rec.Name, Reason: "it is already running"}
	}
	// A resume is the user's (panes may not resume), so only the
	// emulator budget applies; a refusal is no failed attempt.
	if err := d.reserveLocked(s, "", a.Cols, a.Rows); err != nil {
		d.mu.Unlock()
		return proto.ResumeOutcome{Name: rec.Name, Reason: err.Error()}
	}
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		s.reserved = 0
		d.mu.Unlock()
	}()
	fail := func(reason string) proto.ResumeOutcome {
		attempts := rec.RestoreAttempts + 1
		d.store.SetRestore(ctx, rec.ID, reason, attempts)
		d.mu.Lock()
		s.rec.RestoreReason, s.rec.RestoreAttempts = reason, attempts
		s.rec.UpdatedAt = time.Now()
		d.mu.Unlock()
		d.stateChanged()
		d.logger.Warn("resume failed", "session_id", rec.ID, "reason", reason)
		return proto.ResumeOutcome{Name: rec.Name, Reason: reason}
	}
	env := map[string]string{}
	for k, v := range rec.Env {
		env[k] = v
	}
	for k, v := range a.Env {
		env[k] = v
	}
	argv, err := d.resumeArgv(rec, env)
	if err != nil {
		return fail(err.Error())
	}
	if err := d.launch(ctx, s, argv, env, a.Cols, a.Rows); err != nil {
		return fail(err.Error())
	}
	d.mu.Lock()
	p := s.pane
	d.mu.Unlock()
	// A resume that dies at once (stale id, broken install) is reported,
	// not retried in a loop.
	select {
	case <-p.Done():
		_, code := p.Exited()
		return fail(fmt.Sprintf("resume exited at once with code %d: %s", code, lastLine(p)))
	case <-time.After(d.resumeSettle()):
	case <-ctx.Done():
		// The client hung up: the pane runs on, unconfirmed, and the
		// sessions after this one are left for the next resume.
		return proto.ResumeOutcome{Name: rec.Name, Argv: argv, Reason: "the client left before the resume was confirmed"}
	}
	d.store.SetRestore(ctx, rec.ID, "", 0)
	d.mu.Lock()
	s.rec.RestoreReason, s.rec.RestoreAttempts = "", 0
	d.mu.Unlock()
	d.stateChanged()
	// The conversation the disconnected items reported lost is back.
	if err := d.events.Resumed(ctx, rec.ID); err != nil {
		d.logger.Warn("resolve disconnected items", "session_id", rec.ID, "err", err)
	}
	_, agent := all.Launch(rec.Provider)
	fresh := agent && rec.ShellCommand == "" && (rec.NativeID == "" || !rec.NativeConfirmed)
	d.logger.Info("session resumed", "session_id", rec.ID, "argv0", argv[0], "new_conversation", fresh)
	return proto.ResumeOutcome{Name: rec.Name, Resumed: true, Argv: argv, NewConversation: fresh}
}

func lastLine(p interface {
	Capture(context.Context, int, bool) (string, error)
}) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	text, _ := p.Capture(ctx, 0, false)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// resumeArgv builds the command that brings a session back: the provider's
// resume command with the captured id; the original new-session command
// (same assigned id) while the id is still provisional; a custom launcher's
// template.
func (d *Daemon) resumeArgv(rec store.Session, env map[string]string) ([]string, error) {
	shell := env["SHELL"]
	if shell == "" {
		shell = "/bin/sh"
	}
	if rec.ShellCommand != "" {
		if rec.NativeID == "" || !rec.NativeConfirmed || plainComposition(rec) {
			// A plain composition pane never appends an id: it runs again.
			return append([]string{shell, "-c", rec.ShellCommand}, rec.Args...), nil
		}
		cmd, err := renderResume(rec)
		if err != nil {
			return nil, err
		}
		return []string{shell, "-c", cmd}, nil
	}
	l, ok := all.Launch(rec.Provider)
	if !ok {
		// A plain shell comes back as a fresh shell in the same place.
		return rec.Argv, nil
	}
	if rec.NativeID == "" || !rec.NativeConfirmed {
		// Never resume a conversation that may not exist: repeat the
		// original new-session command, with the same assigned id.
		return rec.Argv, nil
	}
	if err := d.transcriptExists(rec, env); err != nil {
		return nil, err
	}
	exe, err := findExecutable(l.Executables, env["PATH"])
	if err != nil {
		exe = rec.Argv[0]
	}
	argv := append([]string{exe}, l.ResumeArgs(rec.NativeID)...)
	return append(argv, rec.Args...), nil
}

// transcriptExists checks that the provider still has the conversation, so
// that a resume of a deleted transcript is reported instead of attempted.
func (d *Daemon) transcriptExists(rec store.Session, env map[string]string) error {
	id := rec.NativeID
	if strings.ContainsAny(id, "*?[]/\\") {
		return fmt.Errorf("native id %q is not a plain id", id)
	}
	// The provider packages own where their transcripts live.
	c, ok := all.As[provider.TranscriptChecker](rec.Provider)
	if !ok {
		return nil
	}
	tenv := transcript.Env{Home: env["HOME"], Getenv: func(k string) string { return env[k] }}
	if c.HasTranscript(tenv, id) {
		return nil
	}
	return fmt.Errorf("the %s transcript of %s is gone; the conversation cannot be resumed", rec.Provider, id)
}

// NativeIDFound records the provider session id the native estimator
// proved for a surface's agent (native.Listener): the session its own
// processes are in, or the id assigned at launch now that its transcript
// is on disk. Hooks capture the same id where they run; without them this
// is what lets `muster resume` reopen the conversation (issue 23). Only a
// session that launched the provider itself takes it: a shell pane's
// agent is the user's command, which restores by running again.
func (d *Daemon) NativeIDFound(surfaceID, prov, nativeID string) {
	if nativeid.ValidSessionID(nativeID) != nil {
		return
	}
	d.mu.Lock()
	var s *session
	for _, c := range d.sessions {
		if c.pane != nil && c.surface.ID == surfaceID {
			s = c
			break
		}
	}
	if s == nil || s.rec.Provider != prov || !agentIsRoot(s.rec) || (s.rec.NativeID == nativeID && s.rec.NativeConfirmed) {
		d.mu.Unlock()
		return
	}
	id := s.rec.ID
	d.mu.Unlock()
	d.bg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.store.SetNative(ctx, id, nativeID, true); err != nil {
			d.logger.Warn("record proven native id", "session_id", id, "err", err)
			return
		}
		d.mu.Lock()
		old := s.rec.NativeID
		s.rec.NativeID, s.rec.NativeConfirmed = nativeID, true
		d.mu.Unlock()
		d.stateChanged()
		d.logger.Info("native session proved by its transcript", "session_id", id, "provider", prov, "native_id", nativeID, "replaced", old != "" && old != nativeID)
	})
}
