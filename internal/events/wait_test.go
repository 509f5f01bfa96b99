package events

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

type waitOutcome struct {
	res proto.WaitResult
	err error
}

func (h *harness) waitAsync(a proto.WaitArgs) <-chan waitOutcome {
	ch := make(chan waitOutcome, 1)
	go func() {
		res, err := h.e.Wait(context.Background(), a)
		ch <- waitOutcome{res, err}
	}()
	return ch
}

// notYet checks that a wait is still blocked once everything queued has
// committed.
func notYet(t *testing.T, h *harness, ch <-chan waitOutcome) {
	t.Helper()
	h.e.Flush(t.Context())
	select {
	case o := <-ch:
		t.Fatalf("wait returned early: %+v, %v", o.res, o.err)
	default:
	}
}

func TestWait(t *testing.T) {
	t.Run("already satisfied returns at once", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindInputRequested})
		res, err := h.e.Wait(t.Context(), proto.WaitArgs{Names: []string{"api"}, Until: []string{"waiting"}})
		if err != nil || res.Status != proto.WaitReached || res.Sessions[0].State != "waitingInput" || !res.Sessions[0].Reached {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
	})
	t.Run("blocks until pushed", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindStarted})
		ch := h.waitAsync(proto.WaitArgs{Names: []string{"api"}, Until: []string{"done"}})
		notYet(t, h, ch)
		h.mustPost(evt{id: "e2", run: "r1", surface: "sf", kind: proto.KindApprovalRequested})
		notYet(t, h, ch)
		h.mustPost(evt{id: "e3", run: "r1", surface: "sf", kind: proto.KindFailed})
		o := <-ch
		if o.err != nil || o.res.Status != proto.WaitReached || o.res.Sessions[0].State != "failed" {
			t.Fatalf("Wait = %+v, %v", o.res, o.err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindStarted})
		res, err := h.e.Wait(t.Context(), proto.WaitArgs{Names: []string{"api"}, Until: []string{"succeeded"}, TimeoutMS: 30})
		if err != nil || res.Status != proto.WaitTimeout || res.Sessions[0].State != "running" || res.Sessions[0].Reached {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
	})
	t.Run("session disappears", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		ch := h.waitAsync(proto.WaitArgs{Names: []string{"api"}, Until: []string{"done"}})
		notYet(t, h, ch)
		h.e.SessionRemoved("s1")
		o := <-ch
		if o.err != nil || o.res.Status != proto.WaitGone || !o.res.Sessions[0].Gone {
			t.Fatalf("Wait = %+v, %v", o.res, o.err)
		}
	})
	t.Run("idle is reached when the quiet time passes", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindSucceeded})
		ch := h.waitAsync(proto.WaitArgs{Names: []string{"api"}, Until: []string{"idle"}})
		notYet(t, h, ch)
		h.clock.Add(2 * time.Minute)
		h.e.Flush(t.Context()) // any commit wakes waiters to look at the clock again
		o := <-ch
		if o.err != nil || o.res.Status != proto.WaitReached || o.res.Sessions[0].State != "idle" || o.res.Sessions[0].Terminal != "succeeded" {
			t.Fatalf("Wait = %+v, %v", o.res, o.err)
		}
	})
	t.Run("a terminal state is still reached under idle", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindSucceeded, at: h.clock.Now().Add(-time.Hour)})
		res, err := h.e.Wait(t.Context(), proto.WaitArgs{Names: []string{"api"}, Until: []string{"succeeded"}})
		if err != nil || res.Status != proto.WaitReached || res.Sessions[0].State != "idle" {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
	})
	t.Run("attention group", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindStarted})
		ch := h.waitAsync(proto.WaitArgs{Names: []string{"api"}, Until: []string{"attention"}})
		notYet(t, h, ch)
		h.mustPost(evt{id: "e2", run: "r1", surface: "sf", kind: proto.KindInputRequested})
		if o := <-ch; o.res.Status != proto.WaitReached || o.res.Sessions[0].Attention != 1 {
			t.Fatalf("Wait = %+v, %v", o.res, o.err)
		}
	})
	t.Run("all of several sessions, or any", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf1", "s1", "one", "claude")
		h.surface("sf2", "s2", "two", "claude")
		h.mustPost(evt{id: "e1", run: "r1", surface: "sf1", kind: proto.KindSucceeded})
		if res, _ := h.e.Wait(t.Context(), proto.WaitArgs{Names: []string{"one", "two"}, Until: []string{"done"}, Any: true}); res.Status != proto.WaitReached {
			t.Fatalf("any: %+v", res)
		}
		ch := h.waitAsync(proto.WaitArgs{Names: []string{"one", "two"}, Until: []string{"done"}})
		notYet(t, h, ch)
		h.mustPost(evt{id: "e2", run: "r2", surface: "sf2", kind: proto.KindInterrupted})
		if o := <-ch; o.res.Status != proto.WaitReached || !o.res.Sessions[0].Reached || !o.res.Sessions[1].Reached {
			t.Fatalf("all: %+v, %v", o.res, o.err)
		}
	})
	t.Run("any: one gone session does not end the wait", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf1", "s1", "one", "claude")
		h.surface("sf2", "s2", "two", "claude")
		ch := h.waitAsync(proto.WaitArgs{Names: []string{"one", "two"}, Until: []string{"done"}, Any: true})
		h.e.SessionRemoved("s1")
		notYet(t, h, ch)
		h.mustPost(evt{id: "e1", run: "r", surface: "sf2", kind: proto.KindFailed})
		if o := <-ch; o.res.Status != proto.WaitReached || !o.res.Sessions[0].Gone || !o.res.Sessions[1].Reached {
			t.Fatalf("Wait = %+v, %v", o.res, o.err)
		}
	})
	t.Run("bad requests", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		for _, a := range []proto.WaitArgs{
			{Names: []string{"nope"}, Until: []string{"done"}},
			{Until: []string{"done"}},
			{Names: []string{"api"}, Until: []string{"sleeping"}},
			{Names: []string{"api"}},
			{Names: []string{"api"}, Until: []string{"done"}, TimeoutMS: -1},
		} {
			if _, err := h.e.Wait(t.Context(), a); !errors.As(err, new(*proto.Error)) {
				t.Errorf("Wait(%+v) = %v, want a proto error", a, err)
			}
		}
	})
	t.Run("cancelled by the client", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := h.e.Wait(ctx, proto.WaitArgs{Names: []string{"api"}, Until: []string{"done"}}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait = %v", err)
		}
	})
}

func TestControlOps(t *testing.T) {
	h := startHarness(t, "")
	h.surface("sf", "s1", "api", "claude")
	h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindFailed, msg: "boom"})
	m := proto.NewMux()
	h.e.RegisterControl(m)
	call := func(op, args string) proto.Response {
		t.Helper()
		if !m.Has(op) {
			t.Fatalf("op %s not handled", op)
		}
		r := m.Serve(t.Context(), proto.Request{Op: op, Args: json.RawMessage(args)})
		if o, _ := proto.Lookup(op); !r.OK && !o.MayReturn(r.Error.Code) {
			t.Errorf("op %s failed with %s, which proto.Ops does not list for it", op, r.Error.Code)
		}
		return r
	}
	var items []proto.AttentionItem
	if r := call(proto.OpAttention, `{}`); !r.OK || json.Unmarshal(r.Result, &items) != nil || len(items) != 1 || items[0].Message != "boom" {
		t.Fatalf("attention: %+v", r)
	}
	if r := call(proto.OpAck, `{"ids":[1]}`); !r.OK || string(r.Result) != `{"acknowledged":[1],"already":[]}` {
		t.Fatalf("ack: %+v %s", r, r.Result)
	}
	if r := call(proto.OpAck, `{"ids":[1],"all":true}`); r.OK || r.Error.Code != proto.CodeBadRequest {
		t.Fatalf("ack both: %+v", r)
	}
	if r := call(proto.OpAck, `{"ids":"x"}`); r.OK || r.Error.Code != proto.CodeBadRequest {
		t.Fatalf("ack bad args: %+v", r)
	}
	if r := call(proto.OpExplain, `{"name":"nope"}`); r.OK || r.Error.Code != proto.CodeNotFound || r.Error.Hint == "" {
		t.Fatalf("explain unknown: %+v", r)
	}
	var x proto.Explanation
	if r := call(proto.OpExplain, `{"name":"api"}`); !r.OK || json.Unmarshal(r.Result, &x) != nil || *x.State != "failed" {
		t.Fatalf("explain: %+v", r)
	}
	var wr proto.WaitResult
	if r := call(proto.OpWait, `{"names":["api"],"until":["done"]}`); !r.OK || json.Unmarshal(r.Result, &wr) != nil || wr.Status != "reached" {
		t.Fatalf("wait: %+v", r)
	}
	if r := call(proto.OpWait, `{"names":["api"],"until":["bogus"]}`); r.OK || r.Error.Code != proto.CodeInvalid {
		t.Fatalf("wait bogus: %+v", r)
	}
	if got := m.Ops(); !slices.Equal(got, []string{proto.OpAck, proto.OpAttention, proto.OpExplain, proto.OpWait}) {
		t.Fatalf("the engine registered %v", got)
	}
}
