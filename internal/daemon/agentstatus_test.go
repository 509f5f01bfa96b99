package daemon

import (
	"testing"
	"time"

	"github.com/musterhq/muster/internal/events"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
)

// status decodes one OSC 7501 sequence the way a pane's scanner does.
func status(t *testing.T, raw string) termsignal.Signal {
	t.Helper()
	_, sigs := termsignal.New().Feed([]byte(raw), nil)
	if len(sigs) != 1 {
		t.Fatalf("%q decodes to %d signals", raw, len(sigs))
	}
	return sigs[0]
}

func TestAgentStatusEvent(t *testing.T) {
	const (
		errorSeq = "\x1b]7501;state=error:app=codex\x1b\\" // what Codex 0.169 sent on a failed turn
		surface  = "surf-1"
		run      = "run-1"
	)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	open := events.Summary{RunState: "running", RunID: run, SurfaceID: surface}
	tests := []struct {
		name     string
		provider string
		seq      string
		cur      events.Summary
		want     bool
	}{
		{"codex error fails the open run", "codex", errorSeq, open, true},
		{"while waiting for approval", "codex", errorSeq, events.Summary{RunState: "waitingApproval", RunID: run, SurfaceID: surface}, true},
		{"without app", "codex", "\x1b]7501;state=error\x1b\\", open, true},
		{"done is left to the Stop hook", "codex", "\x1b]7501;state=done:app=codex\x1b\\", open, false},
		{"idle", "codex", "\x1b]7501;state=idle:app=codex\x1b\\", open, false},
		{"another app", "codex", "\x1b]7501;state=error:app=other\x1b\\", open, false},
		{"not codex", "claude", errorSeq, open, false},
		{"run already failed", "codex", errorSeq, events.Summary{RunState: "failed", RunID: run, SurfaceID: surface}, false},
		{"run already succeeded", "codex", errorSeq, events.Summary{RunState: "succeeded", RunID: run, SurfaceID: surface}, false},
		{"no run", "codex", errorSeq, events.Summary{}, false},
		{"run of another surface", "codex", errorSeq, events.Summary{RunState: "running", RunID: run, SurfaceID: "old"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, ok := agentStatusEvent(tt.provider, status(t, tt.seq), tt.cur, surface, "native-1", now)
			if ok != tt.want {
				t.Fatalf("agentStatusEvent ok = %v, want %v (event %+v)", ok, tt.want, ev)
			}
			if !ok {
				return
			}
			if ev.Kind != proto.KindFailed || ev.RunID.RawValue != run || ev.SurfaceID.RawValue != surface ||
				ev.Provider != tt.provider || ev.HookName != hookTurnCompleted || ev.SessionID == nil || *ev.SessionID != "native-1" ||
				!ev.OccurredAt.Equal(now) || ev.SchemaVersion != proto.EventSchemaVersion || ev.ID.RawValue == "" {
				t.Errorf("event %+v", ev)
			}
		})
	}
}

func TestAgentStatusEventIDDependsOnTheRunOnly(t *testing.T) {
	sig := status(t, "\x1b]7501;state=error:app=codex\x1b\\")
	cur := events.Summary{RunState: "running", RunID: "run-1", SurfaceID: "s"}
	a, _ := agentStatusEvent("codex", sig, cur, "s", "", time.Unix(1, 0))
	b, _ := agentStatusEvent("codex", sig, cur, "s", "n", time.Unix(2, 0))
	cur.RunID = "run-2"
	c, _ := agentStatusEvent("codex", sig, cur, "s", "", time.Unix(1, 0))
	if a.ID != b.ID || a.ID == c.ID {
		t.Errorf("event ids: %s, %s (same run), %s (other run)", a.ID.RawValue, b.ID.RawValue, c.ID.RawValue)
	}
	if a.SessionID != nil {
		t.Errorf("without a native id the event names session %q", *a.SessionID)
	}
	if !proto.ReservedHookName(a.HookName) {
		t.Errorf("hook name %q is not reserved for the daemon", a.HookName)
	}
}
