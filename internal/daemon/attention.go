package daemon

import (
	"time"

	"github.com/musterhq/muster/internal/native"
	"github.com/musterhq/muster/internal/pane"
	"github.com/musterhq/muster/internal/proto"
)

// bellAfterInput is how long after the user typed into a pane a bell is
// taken for the program's answer to that keystroke (a shell's failed tab
// completion) rather than a request for attention: the user is looking.
const bellAfterInput = time.Second

// AttentionRequested turns a pane's request for attention (a notification
// or a bell, already rate-limited by the estimator) into an attention item
// (native.Listener). It runs on the pane's reader goroutine and never
// waits.
func (d *Daemon) AttentionRequested(surfaceID string, r native.AttentionRequest) {
	if r.Evidence == "BEL" {
		if p := d.paneOf(surfaceID); p != nil && r.At.Sub(p.LastInput()) < bellAfterInput {
			return
		}
	}
	if !d.events.Notify(surfaceID, r.Text, r.At) {
		d.logger.Debug("attention request dropped: the event queue is full", "surface_id", surfaceID)
	}
}

// PaneActivity is the activity of a session's live pane, for explain
// (events.PaneReporter).
func (d *Daemon) PaneActivity(sessionID string) (proto.Activity, bool) {
	d.mu.Lock()
	s, ok := d.sessions[sessionID]
	live := ok && s.pane != nil
	surfaceID := ""
	if live {
		surfaceID = s.surface.ID
		if exited, _ := s.pane.Exited(); exited {
			live = false
		}
	}
	d.mu.Unlock()
	if !live || d.native == nil {
		return proto.Activity{}, false
	}
	a := d.native.Activity(surfaceID)
	out := proto.Activity{State: a.State, Evidence: a.Evidence, Notification: a.Notification, Skipped: a.Skipped}
	if !a.Since.IsZero() {
		out.Since = a.Since.UTC().Format(time.RFC3339Nano)
	}
	for _, r := range a.Recent {
		out.Recent = append(out.Recent, proto.ActivitySignal{At: r.At.UTC().Format(time.RFC3339Nano), Evidence: r.Evidence})
	}
	return out, true
}

// paneOf returns the live pane of a surface, nil when it has none.
func (d *Daemon) paneOf(surfaceID string) *pane.Pane {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.sessions {
		if s.pane != nil && s.surface.ID == surfaceID {
			return s.pane
		}
	}
	return nil
}

// PaneOf tells the event engine's wait what became of a session's pane
// (events.PaneResolver).
func (d *Daemon) PaneOf(sessionID string) (string, *int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.sessions[sessionID]
	switch {
	case !ok:
		return "", nil
	case s.pane != nil:
		if exited, code := s.pane.Exited(); exited {
			return proto.PaneExited, &code
		}
		return proto.PaneLive, nil
	case restorable(s):
		return proto.PaneRestorable, nil
	}
	// A pane of an earlier daemon that ended on its own.
	return proto.PaneExited, s.surface.ExitCode
}
