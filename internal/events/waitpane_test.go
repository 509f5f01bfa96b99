package events

import (
	"testing"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/runstate"
)

// TestWaitSemantics: `done` is also an exited or restorable pane, with
// its exit code; `waiting` is also a turn that ended at the prompt.
func TestWaitSemantics(t *testing.T) {
	t.Run("done by an exited pane without any run", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "sh", "shell")
		h.res.setPane("s1", proto.PaneLive, nil)
		ch := h.waitAsync(proto.WaitArgs{Names: []string{"sh"}, Until: []string{"done"}})
		notYet(t, h, ch)
		code := 3
		h.res.setPane("s1", proto.PaneExited, &code)
		h.e.CloseSurface("sf", &code)
		o := <-ch
		s := o.res.Sessions[0]
		if o.err != nil || o.res.Status != proto.WaitReached || !s.Reached || s.Pane != proto.PaneExited || s.ExitCode == nil || *s.ExitCode != 3 {
			t.Fatalf("Wait = %+v, %v", o.res, o.err)
		}
	})
	t.Run("done by a restorable pane, checked first", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindStarted})
		h.res.setPane("s1", proto.PaneRestorable, nil)
		res, err := h.e.Wait(t.Context(), proto.WaitArgs{Names: []string{"api"}, Until: []string{"done"}, TimeoutMS: 5000})
		if err != nil || res.Status != proto.WaitReached || res.Sessions[0].Pane != proto.PaneRestorable || res.Sessions[0].State != "running" {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
	})
	t.Run("an exited pane is not running", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		code := 0
		h.res.setPane("s1", proto.PaneExited, &code)
		res, err := h.e.Wait(t.Context(), proto.WaitArgs{Names: []string{"api"}, Until: []string{"running"}, TimeoutMS: 30})
		if err != nil || res.Status != proto.WaitTimeout || res.Sessions[0].Reached {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
	})
	for _, kind := range []proto.EventKind{proto.KindSucceeded, proto.KindFailed, proto.KindInterrupted, proto.KindApprovalRequested, proto.KindInputRequested} {
		t.Run("waiting by "+string(kind), func(t *testing.T) {
			h := startHarness(t, "")
			h.surface("sf", "s1", "api", "claude")
			h.res.setPane("s1", proto.PaneLive, nil)
			h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindStarted})
			ch := h.waitAsync(proto.WaitArgs{Names: []string{"api"}, Until: []string{"waiting"}})
			notYet(t, h, ch)
			h.mustPost(evt{id: "e2", run: "r1", surface: "sf", kind: kind})
			o := <-ch
			if o.err != nil || o.res.Status != proto.WaitReached || o.res.Sessions[0].State != string(runstate.StateFor(kind)) {
				t.Fatalf("Wait = %+v, %v", o.res, o.err)
			}
		})
	}
	t.Run("disconnected is not waiting", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindStarted})
		h.mustPost(evt{id: "e2", run: "r1", surface: "sf", kind: proto.KindDisconnected})
		res, err := h.e.Wait(t.Context(), proto.WaitArgs{Names: []string{"api"}, Until: []string{"waiting"}, TimeoutMS: 30})
		if err != nil || res.Status != proto.WaitTimeout {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
	})
}
