package daemon

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/musterhq/muster/internal/events"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/termsignal"
)

// hookTurnCompleted is the reserved hook name of a turn end that the
// daemon read from the agent itself rather than from a hook.
const hookTurnCompleted = proto.ReservedHookPrefix + "native.turnCompleted"

// agentStatusNS is the UUIDv5 namespace of the event ids below.
var agentStatusNS = uuid.MustParse("4d1f5d3e-8c2a-4b7e-9a61-2f0c7b5e9d13")

// agentStatusEvent turns an agent status signal of a pane (OSC 7501) into
// the event it proves, if any: a failed turn, when the provider says the
// signal proves one (provider.SignalReader; Codex fires no hook when a turn
// fails), for the run that is open on this surface. Without an open run
// (hooks not installed, or the turn already ended) it proves nothing. The
// event id depends on the run only, so a repeated status changes nothing.
func agentStatusEvent(prov string, sig termsignal.Signal, cur events.Summary, surfaceID, nativeID string, now time.Time) (proto.Event, bool) {
	r, ok := all.As[provider.SignalReader](prov)
	if !ok || !r.TurnFailed(sig) {
		return proto.Event{}, false
	}
	switch proto.RunState(cur.RunState) {
	case proto.StateRunning, proto.StateWaitingInput, proto.StateWaitingApproval:
	default:
		return proto.Event{}, false
	}
	if cur.RunID == "" || cur.SurfaceID != surfaceID {
		return proto.Event{}, false
	}
	ev := proto.Event{
		SchemaVersion: proto.EventSchemaVersion,
		ID:            proto.RawID{RawValue: uuid.NewSHA1(agentStatusNS, []byte("failed\x00"+cur.RunID)).String()},
		RunID:         proto.RawID{RawValue: cur.RunID},
		SurfaceID:     proto.RawID{RawValue: surfaceID},
		Provider:      prov,
		Kind:          proto.KindFailed,
		OccurredAt:    now,
		Message:       "the turn ended with an error (OSC " + sig.Raw + ")",
		HookName:      hookTurnCompleted,
	}
	if nativeID != "" {
		id := nativeID
		ev.SessionID = &id
	}
	return ev, true
}

// onAgentStatus records what a pane's OSC 7501 statuses prove. It runs on
// the pane's output path, so the event is recorded in the background, by a
// goroutine Run waits for before it closes the engine and the store.
func (d *Daemon) onAgentStatus(s *session, surfaceID string, sigs []termsignal.Signal) {
	for _, sig := range sigs {
		if sig.Kind != termsignal.KindAgentStatus {
			continue
		}
		d.mu.Lock()
		prov, native := s.rec.Provider, s.rec.NativeID
		d.mu.Unlock()
		ev, ok := agentStatusEvent(prov, sig, d.events.SessionState(s.rec.ID), surfaceID, native, time.Now())
		if !ok {
			continue
		}
		d.bg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := d.events.Emit(ctx, ev); err != nil {
				d.logger.Warn("record agent status", "session_id", s.rec.ID, "surface_id", surfaceID, "raw", sig.Raw, "err", err)
			}
		})
	}
}
