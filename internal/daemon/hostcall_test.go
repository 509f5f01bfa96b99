package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/poll"
)

// scriptedRelay answers each call with the next of its answers (nil: ok),
// and notices two calls at once.
type scriptedRelay struct {
	answers []error
	inCall  atomic.Int32
	overlap atomic.Bool
	closed  atomic.Bool
	calls   atomic.Int32
}

func (s *scriptedRelay) Call(ctx context.Context, op string, args, out any) error {
	if s.inCall.Add(1) > 1 {
		s.overlap.Store(true)
	}
	defer s.inCall.Add(-1)
	time.Sleep(time.Millisecond)
	n := int(s.calls.Add(1)) - 1
	if n < len(s.answers) && s.answers[n] != nil {
		return s.answers[n]
	}
	if out != nil {
		*out.(*json.RawMessage) = json.RawMessage(`[]`)
	}
	return nil
}

func (s *scriptedRelay) Close() error { s.closed.Store(true); return nil }

// relayScript dials the relays in order, one per dial.
type relayScript struct {
	mu     sync.Mutex
	relays []*scriptedRelay
	dials  int
}

func (r *relayScript) dial(ctx context.Context, host string) (proto.Caller, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dials >= len(r.relays) {
		return nil, proto.Errorf(proto.CodeHostDown, "host %s: unreachable: no more relays", host)
	}
	r.dials++
	return r.relays[r.dials-1], nil
}

func op(t *testing.T, name string) proto.Op {
	o, err := callable(name)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

var linkDown = proto.Errorf(proto.CodeHostDown, "host h1: unreachable: connection lost")

func TestHostRelayRedialsOnceForAReadOnlyOp(t *testing.T) {
	dead, live := &scriptedRelay{answers: []error{linkDown}}, &scriptedRelay{}
	s := &relayScript{relays: []*scriptedRelay{dead, live}}
	r := newHostRelays(s.dial)
	defer r.close()
	// The first call warms the dead relay's place: a relay that dropped
	// while idle fails its next call.
	r.hosts["h1"] = &hostRelay{turn: make(chan struct{}, 1), conn: dead}
	s.dials = 1
	res, err := r.call(context.Background(), "h1", op(t, proto.OpList), nil)
	if err != nil || string(res) != "[]" {
		t.Fatalf("ls over a dropped relay: %s, %v", res, err)
	}
	if !dead.closed.Load() || s.dials != 2 {
		t.Fatalf("dropped relay closed %v, dials %d", dead.closed.Load(), s.dials)
	}
}

func TestHostRelaySendsNoMutatingOpTwice(t *testing.T) {
	dead, live := &scriptedRelay{answers: []error{linkDown}}, &scriptedRelay{}
	s := &relayScript{relays: []*scriptedRelay{live}}
	r := newHostRelays(s.dial)
	defer r.close()
	r.hosts["h1"] = &hostRelay{turn: make(chan struct{}, 1), conn: dead}
	_, err := r.call(context.Background(), "h1", op(t, proto.OpKill), json.RawMessage(`{"name":"x"}`))
	if pe, ok := errors.AsType[*proto.Error](err); !ok || pe.Code != proto.CodeHostDown {
		t.Fatalf("kill over a dropped relay: %v, want %s", err, proto.CodeHostDown)
	}
	if s.dials != 0 || dead.calls.Load() != 1 {
		t.Fatalf("kill was sent again: dials %d, calls %d", s.dials, dead.calls.Load())
	}
	// The next call dials anew.
	if _, err := r.call(context.Background(), "h1", op(t, proto.OpKill), nil); err != nil || s.dials != 1 {
		t.Fatalf("next kill: %v, dials %d", err, s.dials)
	}
}

func TestHostRelayPassesTheInnerErrorThrough(t *testing.T) {
	notFound := &proto.Error{Code: proto.CodeNotFound, Message: `no session "y"`, Hint: "see ls"}
	rel := &scriptedRelay{answers: []error{notFound}}
	s := &relayScript{relays: []*scriptedRelay{rel}}
	r := newHostRelays(s.dial)
	defer r.close()
	_, err := r.call(context.Background(), "h1", op(t, proto.OpKill), nil)
	if pe, ok := errors.AsType[*proto.Error](err); !ok || *pe != *notFound {
		t.Fatalf("inner error came back as %#v", err)
	}
	if rel.closed.Load() {
		t.Fatal("an answer of the inner op closed the relay")
	}
}

// TestHostRelayCallsOneAtATimeAndClosesWhenIdle: calls to one host never
// overlap on its relay; an idle relay is pinged (the host's daemon drops
// a silent control connection), then closed once idle for long enough.
func TestHostRelayCallsOneAtATimeAndClosesWhenIdle(t *testing.T) {
	rel := &scriptedRelay{}
	s := &relayScript{relays: []*scriptedRelay{rel}}
	r := newHostRelays(s.dial)
	r.idle, r.ping = 300*time.Millisecond, 20*time.Millisecond
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := r.call(context.Background(), "h1", op(t, proto.OpList), nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if rel.overlap.Load() || s.dials != 1 {
		t.Fatalf("overlapping calls %v, dials %d", rel.overlap.Load(), s.dials)
	}
	poll.Wait(t, 10*time.Second, func() bool { return rel.calls.Load() > 9 }, func() string { return "the idle relay was never pinged" })
	poll.Wait(t, 10*time.Second, rel.closed.Load, func() string { return "the idle relay was never closed" })
	if rel.overlap.Load() {
		t.Fatal("a ping overlapped a call")
	}
	r.close()
	if _, err := r.call(context.Background(), "h1", op(t, proto.OpList), nil); err == nil {
		t.Fatal("a call after close went through")
	}
}

func TestHostRelayClosesAtShutdown(t *testing.T) {
	rel := &scriptedRelay{}
	r := newHostRelays((&relayScript{relays: []*scriptedRelay{rel}}).dial)
	if _, err := r.call(context.Background(), "h1", op(t, proto.OpList), nil); err != nil {
		t.Fatal(err)
	}
	r.close()
	if !rel.closed.Load() {
		t.Fatal("close left the relay open")
	}
}

func TestHostCallTakesOnlyReplies(t *testing.T) {
	for _, name := range []string{proto.OpWait, proto.OpWatch, proto.OpPreview, proto.OpAttach, proto.OpStop, proto.OpHello, proto.OpHostCall, "nope"} {
		if _, err := callable(name); err == nil {
			t.Errorf("host.call of %s was let through", name)
		}
	}
	for _, name := range []string{proto.OpList, proto.OpAttention, proto.OpSend, proto.OpCapture} {
		if _, err := callable(name); err != nil {
			t.Errorf("host.call of %s: %v", name, err)
		}
	}
}
