package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/native"
	"github.com/musterhq/muster/internal/panepeer"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/store"
)

// This file is the session operations a control request runs: looking a
// session up by name, listing sessions, sending keys, capturing, killing
// and renaming.

// SessionByName resolves a name (or id, or unique id prefix) for the event
// engine.
func (d *Daemon) SessionByName(name string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, err := d.lookupLocked(name)
	if err != nil {
		return "", false
	}
	return s.rec.ID, true
}

// SessionName returns a session's current name for the event engine.
func (d *Daemon) SessionName(id string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.sessions[id]
	if !ok {
		return "", false
	}
	return s.rec.Name, true
}

// lookup finds a session by name, id, or unique id prefix; d.mu is held.
func (d *Daemon) lookupLocked(name string) (*session, error) {
	if name == "" {
		return nil, proto.Errorf(proto.CodeBadRequest, "no session name given")
	}
	for _, s := range d.sessions {
		if s.rec.Name == name || s.rec.ID == name {
			return s, nil
		}
	}
	var found *session
	for _, s := range d.sessions {
		if len(name) >= 4 && strings.HasPrefix(s.rec.ID, name) {
			if found != nil {
				return nil, proto.Errorf(proto.CodeConflict, "%q matches more than one session id", name)
			}
			found = s
		}
	}
	if found == nil {
		return nil, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("no session named %q", name), Hint: d.unknownNameHintLocked(name)}
	}
	return found, nil
}

func (d *Daemon) list() []proto.SessionInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	ss := make([]*session, 0, len(d.sessions))
	for _, s := range d.sessions {
		ss = append(ss, s)
	}
	// By creation to the nanosecond: SessionInfo's time has seconds, and
	// two sessions started in one second kept their names' order.
	slices.SortFunc(ss, func(a, b *session) int {
		return cmp.Or(a.rec.CreatedAt.Compare(b.rec.CreatedAt), strings.Compare(a.rec.Name, b.rec.Name))
	})
	out := make([]proto.SessionInfo, 0, len(ss))
	for _, s := range ss {
		out = append(out, d.infoLocked(s))
	}
	return out
}

func (d *Daemon) infoLocked(s *session) proto.SessionInfo {
	info := proto.SessionInfo{
		ID: s.rec.ID, Name: s.rec.Name, Provider: s.rec.Provider, CWD: s.rec.CWD,
		CreatedAt:       s.rec.CreatedAt.UTC().Format(time.RFC3339),
		Command:         displayCommand(s),
		SurfaceID:       s.surface.ID,
		State:           "exited",
		ExitCode:        s.surface.ExitCode,
		NativeSessionID: s.rec.NativeID,
		NativeConfirmed: s.rec.NativeConfirmed,
		Reason:          s.rec.RestoreReason,
		Control:         s.rec.Control,
	}
	if s.pane != nil {
		info.PID = s.pane.PID()
		info.Title = s.pane.Title()
		info.Clients = s.pane.Attached()
		if exited, code := s.pane.Exited(); exited {
			info.ExitCode = &code
		} else {
			info.State = "running"
			info.ExitCode = nil
		}
	} else {
		info.PID = s.surface.PID
	}
	if d.events != nil {
		d.events.SessionState(s.rec.ID).Fill(&info)
	}
	if d.native != nil && info.State == "running" {
		a := d.native.Activity(s.surface.ID)
		info.Activity = a.State
		info.ActivityEvidence = a.Evidence
		if a.State == native.Working {
			info.ActivityPercent = a.Percent
		}
		if !a.Since.IsZero() {
			at := a.Since.UTC().Format(time.RFC3339Nano)
			info.ActivitySince = &at
		}
	}
	d.usage.fill(s.surface.ID, &info)
	d.worktrees.fill(s.rec.ID, &info)
	d.fillLimit(s.surface.ID, s.found, &info)
	info.ContinueAfterLimit = s.continueAfterLimit
	if info.State == "running" {
		d.costs.fill(s.surface.ID, &info)
		info.MemoryCeiling = d.memoryCeiling(s.rec.Name)
	}
	if s.pane == nil {
		if restorable(s) {
			info.State = "restorable"
			if info.Reason == "" {
				if s.surface.EndReason == "daemon-died" {
					info.Reason = "the daemon died; `muster resume " + s.rec.Name + "` brings it back"
				} else {
					info.Reason = "the daemon stopped; `muster resume " + s.rec.Name + "` brings it back"
				}
			}
		}
	}
	info.Pane = proto.PaneWord(info.State)
	info.Status = info.StatusWord()
	return info
}

func displayCommand(s *session) string {
	if s.rec.ShellCommand != "" {
		return s.rec.ShellCommand
	}
	return strings.Join(s.surface.Argv, " ")
}

func (d *Daemon) send(ctx context.Context, peer func() panepeer.Where, a proto.SendArgs) error {
	p0 := peer()
	d.mu.Lock()
	s, err := d.lookupLocked(a.Name)
	if err == nil {
		err = d.mayDriveLocked(p0, s)
	}
	if err != nil {
		d.mu.Unlock()
		return err
	}
	p, surfaceID := s.pane, s.surface.ID
	d.mu.Unlock()
	if p == nil {
		return proto.Errorf(proto.CodeExited, "session %q is not running", s.rec.Name)
	}
	_, agent := all.Launch(s.rec.Provider)
	var echo *echoWatch
	if agent && a.Enter && a.Text != "" {
		echo = newEchoWatch(func() (string, error) {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			return p.Capture(ctx, 0, false)
		}, a.Text)
	}
	if a.Text != "" {
		// The key is evidence before the agent can answer it: observed
		// after the write, an agent's fast reaction (its working status)
		// could be fused first, and the key's answer then looked
		// unconfirmed.
		d.native.Input(surfaceID, []byte(a.Text))
		if err := p.Write([]byte(a.Text)); err != nil {
			return proto.Errorf(proto.CodeExited, "session %q: %v", s.rec.Name, err)
		}
	}
	if a.Enter {
		if a.Text != "" {
			// TUIs that see text and CR in one read treat the CR as part of
			// a paste; a separate, later write makes it a key press. Agent
			// TUIs need longer (Codex 0.169 still reads a CR 100 ms after
			// the text as pasted), and only once they have read the text:
			// see echoWatch. A client that hangs up meanwhile gets no Enter.
			pause := 30 * time.Millisecond
			if echo != nil {
				echo.wait(ctx, d.echoTimeout())
				pause = 300 * time.Millisecond
			}
			if err := sleep(ctx, pause); err != nil {
				return err
			}
		}
		d.native.Input(surfaceID, []byte("\r"))
		if err := p.Write([]byte("\r")); err != nil {
			return proto.Errorf(proto.CodeExited, "session %q: %v", s.rec.Name, err)
		}
	}
	return nil
}

// echoTimeout bounds the wait for an agent's echo in send.
func (d *Daemon) echoTimeout() time.Duration {
	if h := d.opts.hooks; h != nil && h.echoTimeout > 0 {
		return h.echoTimeout
	}
	return echoTimeout
}

// resumeSettle is how long a resumed pane must live for its resume to
// count: one that dies sooner (a stale id, a broken install) is reported.
func (d *Daemon) resumeSettle() time.Duration {
	if h := d.opts.hooks; h != nil && h.resumeSettle > 0 {
		return h.resumeSettle
	}
	return 1500 * time.Millisecond
}

// sleep waits for d, or returns ctx's error when it ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (d *Daemon) capture(ctx context.Context, peer func() panepeer.Where, a proto.CaptureArgs) (proto.CaptureResult, error) {
	if a.Scrollback < 0 {
		return proto.CaptureResult{}, proto.Errorf(proto.CodeBadRequest, "scrollback must not be negative")
	}
	p0 := peer()
	d.mu.Lock()
	s, err := d.lookupLocked(a.Name)
	if err == nil {
		err = d.mayDriveLocked(p0, s)
	}
	if err != nil {
		d.mu.Unlock()
		return proto.CaptureResult{}, err
	}
	p, final := s.pane, s.surface.FinalScreen
	d.mu.Unlock()
	if p == nil {
		return proto.CaptureResult{Text: final}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	text, err := p.Capture(ctx, a.Scrollback, a.ANSI)
	if err != nil {
		return proto.CaptureResult{}, proto.Errorf(proto.CodeInternal, "capture %s: %v", s.rec.Name, err)
	}
	return proto.CaptureResult{Text: text}, nil
}

func (d *Daemon) kill(ctx context.Context, peer func() panepeer.Where, name string) error {
	p0 := peer()
	d.mu.Lock()
	s, err := d.lookupLocked(name)
	if err == nil {
		err = d.mayDriveLocked(p0, s)
	}
	if err != nil {
		d.mu.Unlock()
		return err
	}
	p := s.pane
	if s.surface.ID != "" {
		// Processes that outlive the pane are still known to come from it.
		d.ghosts[s.surface.ID] = ghost{sessionID: s.rec.ID, name: s.rec.Name}
	}
	d.mu.Unlock()
	if p != nil {
		d.leftovers.PaneClosing(p.PID())
		p.Close(2 * time.Second)
	}
	if err := d.store.DeleteSession(ctx, s.rec.ID); err != nil {
		return proto.Errorf(proto.CodeInternal, "remove session %s: %v", s.rec.Name, err)
	}
	d.mu.Lock()
	delete(d.sessions, s.rec.ID)
	d.mu.Unlock()
	d.events.SessionRemoved(s.rec.ID)
	d.logger.Info("session killed", "session_id", s.rec.ID)
	if ended := d.leftovers.Reap(d.livePanePIDs()); len(ended) > 0 {
		d.logger.Info("ended shared agent processes no pane uses", "pids", ended)
	}
	return nil
}

// rename writes the store without d.mu, which the pane output path takes,
// and swaps the name in memory afterwards. The new name is reserved while
// the write runs, so that no new session or other rename takes it.
func (d *Daemon) rename(ctx context.Context, peer func() panepeer.Where, a proto.RenameArgs) error {
	if err := validateName(a.NewName); err != nil {
		return err
	}
	p0 := peer()
	d.mu.Lock()
	s, err := d.lookupLocked(a.Name)
	if err == nil {
		err = d.mayDriveLocked(p0, s)
	}
	if err == nil && s.rec.Name != a.NewName && d.nameTakenLocked(a.NewName) {
		err = proto.Errorf(proto.CodeConflict, "a session named %q already exists", a.NewName)
	}
	if err == nil && s.renaming {
		err = proto.Errorf(proto.CodeConflict, "session %q is being renamed", s.rec.Name)
	}
	if err != nil {
		d.mu.Unlock()
		return err
	}
	s.renaming = true
	d.reserved[a.NewName] = true
	id := s.rec.ID
	d.mu.Unlock()
	if h := d.opts.hooks; h != nil && h.renameWrite != nil {
		h.renameWrite()
	}
	err = d.store.RenameSession(ctx, id, a.NewName)
	d.mu.Lock()
	defer d.mu.Unlock()
	s.renaming = false
	delete(d.reserved, a.NewName)
	switch {
	case errors.Is(err, store.ErrNameTaken):
		return proto.Errorf(proto.CodeConflict, "a session named %q already exists", a.NewName)
	case err != nil:
		return proto.Errorf(proto.CodeInternal, "rename: %v", err)
	case d.sessions[id] != s:
		// Killed while the store was written: its row is gone too.
		return proto.Errorf(proto.CodeNotFound, "session %q was killed while being renamed", s.rec.Name)
	}
	s.rec.Name = a.NewName
	d.stateChanged()
	return nil
}

// nameTakenLocked reports whether a session has name, or a rename in
// flight is giving it to one. d.mu is held.
func (d *Daemon) nameTakenLocked(name string) bool {
	if d.reserved[name] {
		return true
	}
	for _, s := range d.sessions {
		if s.rec.Name == name {
			return true
		}
	}
	return false
}

func validateName(name string) error {
	if name == "" {
		return proto.Errorf(proto.CodeInvalid, "session name must not be empty")
	}
	if len(name) > 64 {
		return proto.Errorf(proto.CodeInvalid, "session name %q is longer than 64 bytes", name)
	}
	if strings.HasPrefix(name, "-") {
		return proto.Errorf(proto.CodeInvalid, "session name %q must not start with '-'", name)
	}
	for _, r := range name {
		if r <= ' ' || r == 0x7f || r == '/' || r == ':' {
			return proto.Errorf(proto.CodeInvalid, "session name %q may not contain spaces, control characters, '/' or ':'", name)
		}
	}
	return nil
}
