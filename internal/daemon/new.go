package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/musterhq/muster/internal/events"
	"github.com/musterhq/muster/internal/hookinstall"
	"github.com/musterhq/muster/internal/launcher"
	"github.com/musterhq/muster/internal/native"
	"github.com/musterhq/muster/internal/nativeid"
	"github.com/musterhq/muster/internal/pane"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/termsignal"
)

// newSession creates and launches a session; parent is the session whose
// pane asked for it, "" when a user did.
func (d *Daemon) newSession(ctx context.Context, a proto.NewArgs, parent string) (proto.SessionInfo, error) {
	prov := a.Provider
	switch {
	case prov == "" && a.Cmd != "":
		prov = provider.Custom
	case prov == "":
		prov = provider.Shell
	case !all.Valid(prov):
		return proto.SessionInfo{}, proto.Errorf(proto.CodeInvalid, "%v", all.UnknownError(prov))
	}
	if prov == provider.Custom && strings.TrimSpace(a.Cmd) == "" {
		return proto.SessionInfo{}, proto.Errorf(proto.CodeInvalid, "the custom provider needs a command: --cmd 'COMMAND'")
	}
	if a.Cmd != "" && strings.TrimSpace(a.Cmd) == "" {
		return proto.SessionInfo{}, proto.Errorf(proto.CodeInvalid, "empty command")
	}
	if err := proto.CheckSize(a.Cols, a.Rows); err != nil {
		return proto.SessionInfo{}, err
	}
	dir, err := checkDir(a.Dir)
	if err != nil {
		return proto.SessionInfo{}, err
	}
	if a.Name != "" {
		if err := validateName(a.Name); err != nil {
			return proto.SessionInfo{}, err
		}
	}
	if a.Cmd != "" || a.ResumeCmd != "" {
		if a.Cmd == "" {
			return proto.SessionInfo{}, proto.Errorf(proto.CodeInvalid, "--resume-cmd needs --cmd")
		}
		// Refuse bad templates before anything is stored. A composition
		// without a resume command is a plain pane: seed 000's rule is
		// about resuming a native id, which such a pane never records
		// (nativeCapture refuses it), so it restores by running again.
		if err := launcher.ValidateLaunch(a.Cmd, a.ResumeCmd); err != nil && !errors.Is(err, launcher.ErrCompositionNeedsResume) {
			return proto.SessionInfo{}, proto.Errorf(proto.CodeInvalid, "%v", err)
		}
	}
	if a.Env == nil {
		a.Env = map[string]string{}
	}

	rec := store.Session{
		ID:             uuid.NewString(),
		Name:           a.Name,
		Provider:       prov,
		CWD:            dir,
		ShellCommand:   a.Cmd,
		ResumeTemplate: a.ResumeCmd,
		Args:           a.Args,
		Env:            persistableEnv(a.Env),
		ParentID:       parent,
		Control:        a.Control,
		CreatedAt:      time.Now(),
	}
	argv, err := d.newSessionArgv(&rec, a)
	if err != nil {
		return proto.SessionInfo{}, err
	}
	rec.Argv = argv

	d.mu.Lock()
	if rec.Name == "" {
		rec.Name = d.generateNameLocked(prov)
	} else if d.nameTakenLocked(rec.Name) {
		d.mu.Unlock()
		return proto.SessionInfo{}, &proto.Error{Code: proto.CodeConflict,
			Message: fmt.Sprintf("a session named %q already exists", rec.Name),
			Hint:    "choose another --name, or `muster kill " + rec.Name + "` first"}
	}
	// Reserve the name (and the pane's cells) before releasing the lock
	// so that two concurrent `new`s cannot both take it.
	s := &session{rec: rec, continueAfterLimit: d.opts.ContinueAfterLimit}
	if a.ContinueAfterLimit != nil {
		s.continueAfterLimit = *a.ContinueAfterLimit
	}
	if err := d.reserveLocked(s, parent, a.Cols, a.Rows); err != nil {
		d.mu.Unlock()
		return proto.SessionInfo{}, err
	}
	d.sessions[rec.ID] = s
	d.mu.Unlock()

	fail := func(err error) (proto.SessionInfo, error) {
		d.mu.Lock()
		s.reserved = 0
		delete(d.sessions, rec.ID)
		d.mu.Unlock()
		d.stateChanged()
		d.store.DeleteSession(context.Background(), rec.ID)
		return proto.SessionInfo{}, err
	}
	var wt *store.Worktree
	setup := ""
	if a.Worktree != nil {
		w, note, err := d.createWorktree(ctx, rec.ID, rec.Name, rec.CWD, a.Worktree)
		if err != nil {
			return fail(err)
		}
		wt, setup = &w, note
		rec.CWD = w.Path
		d.mu.Lock()
		s.rec.CWD = w.Path
		d.mu.Unlock()
		failBare := fail
		fail = func(err error) (proto.SessionInfo, error) {
			d.discardWorktree(w)
			d.store.DeleteWorktree(context.Background(), w.Path)
			d.worktrees.forget(w.SessionID)
			return failBare(err)
		}
	}
	if err := d.store.InsertSession(ctx, rec); err != nil {
		if errors.Is(err, store.ErrNameTaken) {
			return fail(proto.Errorf(proto.CodeConflict, "a session named %q already exists", rec.Name))
		}
		return fail(proto.Errorf(proto.CodeInternal, "record session: %v", err))
	}
	if wt != nil {
		if err := d.store.InsertWorktree(ctx, *wt); err != nil {
			return fail(proto.Errorf(proto.CodeInternal, "record worktree: %v", err))
		}
		d.worktrees.add(*wt)
	}
	if err := d.launch(ctx, s, argv, a.Env, a.Cols, a.Rows); err != nil {
		return fail(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	info := d.infoLocked(s)
	if info.Worktree != nil {
		info.Worktree.Setup = setup
		info.Worktree.Exists = true
	}
	return info, nil
}

// newSessionArgv builds the command of a brand-new session.
func (d *Daemon) newSessionArgv(rec *store.Session, a proto.NewArgs) ([]string, error) {
	shell := a.Env["SHELL"]
	if shell == "" {
		shell = "/bin/sh"
	}
	if a.ResumeID != "" && (a.Cmd != "" || rec.Provider == provider.Shell) {
		return nil, proto.Errorf(proto.CodeInvalid, "only a provider's conversation can be resumed, not a command")
	}
	if a.Cmd != "" {
		if err := checkCommand(context.Background(), shell, a.Cmd, rec.CWD, a.Env); err != nil {
			return nil, err
		}
		return append([]string{shell, "-c", a.Cmd}, a.Args...), nil
	}
	if rec.Provider == provider.Shell {
		if a.Provider == "" && len(a.Args) > 0 {
			// `muster new -- CMD ARGS…` runs CMD with ARGS, as given.
			return slices.Clone(a.Args), nil
		}
		return append([]string{shell}, a.Args...), nil
	}
	l, _ := all.Launch(rec.Provider)
	exe, err := findExecutable(l.Executables, a.Env["PATH"])
	if err != nil {
		return nil, &proto.Error{Code: proto.CodeInvalid,
			Message: fmt.Sprintf("%s is not installed: no %s on PATH", rec.Provider, strings.Join(l.Executables, " or ")),
			Hint:    "install it with: " + l.Install}
	}
	if a.ResumeID != "" {
		if err := nativeid.ValidSessionID(a.ResumeID); err != nil || strings.HasPrefix(a.ResumeID, "-") {
			return nil, proto.Errorf(proto.CodeInvalid, "resume id %q is not a session id", a.ResumeID)
		}
		rec.NativeID = a.ResumeID
		argv := append([]string{exe}, l.ResumeArgs(a.ResumeID)...)
		return append(argv, a.Args...), nil
	}
	assigned := ""
	if l.AssignsID {
		assigned = provider.NewID()
		rec.NativeID = assigned
	}
	argv := append([]string{exe}, l.NewArgs(assigned)...)
	return append(argv, a.Args...), nil
}

func findExecutable(names []string, pathEnv string) (string, error) {
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			continue
		}
		for _, n := range names {
			p := filepath.Join(dir, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	return "", errors.New("not found")
}

func checkDir(dir string) (string, error) {
	if dir == "" {
		return "", proto.Errorf(proto.CodeBadRequest, "no working directory given")
	}
	if !filepath.IsAbs(dir) {
		return "", proto.Errorf(proto.CodeInvalid, "working directory %q is not absolute", dir)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return "", proto.Errorf(proto.CodeInvalid, "working directory %s does not exist", dir)
	}
	if !st.IsDir() {
		return "", proto.Errorf(proto.CodeInvalid, "%s is not a directory", dir)
	}
	return filepath.Clean(dir), nil
}

func (d *Daemon) generateNameLocked(prov string) string {
	taken := map[string]bool{}
	for _, s := range d.sessions {
		taken[s.rec.Name] = true
	}
	for i := 1; ; i++ {
		name := fmt.Sprintf("%s-%d", prov, i)
		if !taken[name] && !d.reserved[name] {
			return name
		}
	}
}

// persistableEnv drops variables that look like secrets: launch records
// outlive the process and must not become a credential store.
func persistableEnv(env map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		if launcher.SecretName(k) || strings.HasPrefix(k, "MUSTER_EVENT_") {
			continue
		}
		out[k] = v
	}
	return out
}

// paneEnv builds a pane's environment from the caller's.
func (d *Daemon) paneEnv(base map[string]string, s *session, surfaceID string, extra map[string]string) []string {
	env := map[string]string{}
	for k, v := range base {
		env[k] = v
	}
	// The daemon may run inside tmux; programs in our panes must not think
	// they do (they would wrap their escape sequences for it).
	delete(env, "TMUX")
	delete(env, "TMUX_PANE")
	for k := range env {
		if strings.HasPrefix(k, "MUSTER_") && k != "MUSTER_HOME" {
			delete(env, k)
		}
	}
	if h := d.opts.Getenv("MUSTER_HOME"); h != "" {
		env["MUSTER_HOME"] = h
	}
	env["TERM"] = d.opts.Term
	setTerminalEnv(env, d.opts.Version)
	env["MUSTER_AGENT_SESSION_ID"] = s.rec.ID
	env["MUSTER_SURFACE_ID"] = surfaceID
	for k, v := range extra {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// envEventSocket names the daemon's events socket in every pane's
// environment (internal/hookevent reads it); it also marks the processes
// our panes started (newLeftovers).
const envEventSocket = "MUSTER_EVENT_SOCKET"

// launch starts a new surface for s.
func (d *Daemon) launch(ctx context.Context, s *session, argv []string, env map[string]string, cols, rows int) error {
	surfaceID := uuid.NewString()
	capTok, err := d.events.RegisterSurface(events.Surface{
		ID: surfaceID, SessionID: s.rec.ID, Provider: s.rec.Provider, CWD: s.rec.CWD, LaunchArgs: argv,
	})
	if err != nil {
		return proto.Errorf(proto.CodeInternal, "register surface: %v", err)
	}
	extra := map[string]string{
		envEventSocket:            d.dirs.EventSocket(),
		"MUSTER_EVENT_CAPABILITY": capTok,
	}
	registered := make(chan struct{})
	cfg := d.paneConfig(s, surfaceID, registered)
	cfg.Argv = d.injectHooks(s.rec, argv)
	cfg.Dir = s.rec.CWD
	cfg.Env = d.paneEnv(env, s, surfaceID, extra)
	cfg.Cols, cfg.Rows = cols, rows
	// A program that exits at once must not have its exit recorded before
	// its launch is: the store would keep the surface running.
	recorded := make(chan struct{})
	cfg.OnExit = func(code int) {
		<-recorded
		d.onExit(s, surfaceID, code)
	}
	started := time.Now() // no record of its agent's transcript is older
	p, err := pane.Start(cfg)
	if err != nil {
		close(registered)
		d.events.CloseSurface(surfaceID, nil)
		return proto.Errorf(proto.CodeInvalid, "start %s: %v", argv[0], err)
	}
	if h := d.opts.hooks; h != nil && h.paneStarted != nil {
		h.paneStarted()
	}
	d.events.SurfaceStarted(surfaceID, p.PID())
	injected := len(cfg.Argv) != len(argv) // hooks came with the launch (claude --settings)
	sessionID := s.rec.ID
	d.native.SurfaceStarted(native.Surface{
		ID: surfaceID, SessionID: sessionID, Provider: s.rec.Provider, PID: p.PID(), CWD: s.rec.CWD,
		ForegroundPGID: p.ForegroundPGID, HooksInjected: injected, Started: started,
		NativeID: func() string {
			d.mu.Lock()
			defer d.mu.Unlock()
			return s.rec.NativeID
		},
	})
	close(registered)
	// The session names its new pane before the surface is stored: the
	// program runs already, and its first hook (a fast agent's SessionStart
	// capture) checks the capability and the process against s.surface and
	// s.pane. Named after the write, a capture that came during it was
	// refused and the native id never confirmed.
	su := store.Surface{ID: surfaceID, SessionID: s.rec.ID, PID: p.PID(), Argv: argv, State: "running", StartedAt: time.Now()}
	d.mu.Lock()
	old, oldSurface := s.pane, s.surface
	s.pane, s.surface = p, su
	s.capability, s.hooksInjected = capTok, injected
	s.reserved = 0 // the pane counts its own cells from now on
	d.mu.Unlock()
	if h := d.opts.hooks; h != nil && h.recordingSurface != nil {
		h.recordingSurface()
	}
	// Once the program runs, its record is written whoever asked for it: a
	// client that hangs up now must not end a pane others already see.
	err = d.store.InsertSurface(context.WithoutCancel(ctx), su)
	close(recorded)
	if err != nil {
		d.mu.Lock()
		s.pane, s.surface = old, oldSurface
		d.mu.Unlock()
		p.Close(time.Second)
		return proto.Errorf(proto.CodeInternal, "record surface: %v", err)
	}
	d.stateChanged()
	if old != nil {
		// The exited surface this one replaces (a resume) still holds its
		// emulator and reader goroutines.
		old.Close(0)
	}
	d.logger.Info("pane started", "session_id", s.rec.ID, "surface_id", surfaceID, "pid", p.PID(), "argv0", argv[0])
	return nil
}

// paneConfig is what every pane of s gets, launched or adopted from an
// earlier daemon image (handoff.go): its scanner, limits and logger.
// The pane's signals wait for registered to close: its program runs, and
// its output is read, before the estimator knows the surface, and a
// notification printed at once (`printf '\e]9;…'; exec cat`) was dropped.
func (d *Daemon) paneConfig(s *session, surfaceID string, registered <-chan struct{}) pane.Config {
	d.mu.Lock()
	bell := s.bellLocked()
	d.mu.Unlock()
	return pane.Config{
		Scrollback:      d.opts.Scrollback,
		WindowSize:      d.opts.WindowSize,
		ScrollbackBytes: d.opts.ScrollbackBytes,
		Logger:          d.logger.With("session_id", s.rec.ID, "surface_id", surfaceID),
		Scanner: bellScanner{Scanner: newPaneScanner(func(sigs []termsignal.Signal) {
			<-registered
			d.onSignals(s, surfaceID, sigs)
		}), bell: bell, retitled: d.stateChanged},
		FilterClients: true,
	}
}

// injectHooks adds per-launch hook configuration where the provider allows
// it, so a managed session reports even before `muster hooks setup`.
func (d *Daemon) injectHooks(rec store.Session, argv []string) []string {
	l, ok := all.Launch(rec.Provider)
	if !ok || l.HookArgs == nil || rec.ShellCommand != "" || d.musterPath == "" {
		return argv
	}
	settings, ok := hookinstall.SettingsJSON(rec.Provider, d.musterPath)
	if !ok {
		return argv
	}
	return slices.Concat(argv[:1], l.HookArgs(settings), argv[1:])
}

func (d *Daemon) onSignals(s *session, surfaceID string, sigs []termsignal.Signal) {
	d.native.Signals(surfaceID, sigs)
	d.onAgentStatus(s, surfaceID, sigs)
}

func (d *Daemon) onExit(s *session, surfaceID string, code int) {
	d.mu.Lock()
	p := s.pane
	current := s.surface.ID == surfaceID
	d.mu.Unlock()
	final := ""
	if p != nil && current {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		final, _ = p.Capture(ctx, 0, false)
		cancel()
	}
	d.native.SurfaceExited(context.Background(), surfaceID, code)
	// Revoke the capability and disconnect unfinished runs at once.
	d.events.CloseSurface(surfaceID, &code)
	now := time.Now()
	reason := "exited"
	select {
	case <-d.shutting:
		reason = "daemon-stopped"
	default:
	}
	if err := d.store.ExitSurface(context.Background(), surfaceID, &code, final, reason, now); err != nil {
		d.logger.Error("record pane exit", "surface_id", surfaceID, "err", err)
	}
	d.mu.Lock()
	if current {
		s.surface.State = "exited"
		s.surface.ExitCode = &code
		s.surface.FinalScreen = final
		s.surface.EndReason = reason
		s.surface.EndedAt = &now
	}
	d.mu.Unlock()
	d.stateChanged()
	d.logger.Info("pane exited", "session_id", s.rec.ID, "surface_id", surfaceID, "exit_code", code)
}
