package events

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/runstate"
)

// TestFailedCommitFailsOnlyItsEvents: events sent at once by several
// clients share commits; one whose commit fails (a deferred constraint a
// test trigger violates) is answered storage_failure and stores nothing,
// every other is acknowledged and stored, and each surface's events are
// stored in the order they were acknowledged.
func TestFailedCommitFailsOnlyItsEvents(t *testing.T) {
	h := startHarness(t, "")
	const clients, perClient = 6, 40
	for c := range clients {
		h.surface(fmt.Sprintf("sf%d", c), fmt.Sprintf("s%d", c), fmt.Sprintf("n%d", c), "claude")
	}
	for _, q := range []string{
		`CREATE TABLE test_parent (id INTEGER PRIMARY KEY)`,
		`CREATE TABLE test_child (parent INTEGER REFERENCES test_parent(id) DEFERRABLE INITIALLY DEFERRED)`,
		`CREATE TRIGGER test_fail_commit AFTER INSERT ON agent_events WHEN NEW.hook_name = 'fail-commit'
			BEGIN INSERT INTO test_child(parent) VALUES (42); END`,
	} {
		if _, err := h.st.W.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	acked := map[string][]string{} // surface → ids in the order acknowledged
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			surface := fmt.Sprintf("sf%d", c)
			for i := range perClient {
				id := fmt.Sprintf("%s-e%d", surface, i)
				hook, want := "PostToolUse", okInserted
				if i%10 == 7 {
					hook, want = "fail-commit", errResp(proto.ErrStorageFailure)
				}
				got := h.post(evt{id: id, run: "r", surface: surface, kind: proto.KindRunning, hook: hook})
				if got != want {
					t.Errorf("%s (%s): %q, want %q", id, hook, got, want)
					continue
				}
				if want == okInserted {
					mu.Lock()
					acked[surface] = append(acked[surface], id)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	evs, err := h.st.Events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string][]string{}
	for _, ev := range evs {
		if ev.HookName == "fail-commit" {
			t.Errorf("stored %s, whose commit failed", ev.ID)
		}
		stored[ev.SurfaceID] = append(stored[ev.SurfaceID], ev.ID)
	}
	for c := range clients {
		s := fmt.Sprintf("sf%d", c)
		if fmt.Sprint(stored[s]) != fmt.Sprint(acked[s]) {
			t.Errorf("%s: stored %v\nacknowledged %v", s, stored[s], acked[s])
		}
	}
	// A failed event can be sent again once the cause is gone.
	if _, err := h.st.W.Exec(`DROP TRIGGER test_fail_commit`); err != nil {
		t.Fatal(err)
	}
	if got := h.post(evt{id: "sf0-e7", run: "r", surface: "sf0", kind: proto.KindRunning, hook: "fail-commit"}); got != okInserted {
		t.Errorf("resent after the failure: %q", got)
	}
}

// TestConcurrentEventsShareACommit: events submitted at once share a
// commit even when the first reaches the writer before the others are
// queued; the writer yields once so that they join it. One processor
// makes the order of the goroutines fixed: the writer takes the first
// event while the other submitters are ready but have not run yet.
func TestConcurrentEventsShareACommit(t *testing.T) {
	h := startHarness(t, "")
	h.surface("sf", "s1", "n1", "claude")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const n = 8
	before := h.e.Stats()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ev := proto.Event{SchemaVersion: 1, ID: proto.RawID{RawValue: fmt.Sprintf("e%d", i)}, RunID: proto.RawID{RawValue: "r"},
				SurfaceID: proto.RawID{RawValue: "sf"}, Provider: "claude", Kind: proto.KindRunning,
				HookName: "muster.test", OccurredAt: h.clock.Now()}
			if ins, err := h.e.Emit(t.Context(), ev); err != nil || !ins {
				t.Errorf("event %d: inserted %v, %v", i, ins, err)
			}
		})
	}
	wg.Wait()
	st := h.e.Stats()
	if got := st.Events - before.Events; got != n {
		t.Fatalf("%d events recorded, want %d", got, n)
	}
	// One commit, except under the race detector, which shuffles the
	// order of ready goroutines; without the yield it is one each.
	if got := st.Batches - before.Batches; got >= n/2 {
		t.Errorf("%d events took %d commits, want them to share", n, got)
	}
}

// TestLoneEventsCommitAlone: a client that sends one event at a time has
// each acknowledged after its own commit, which already holds it: the
// writer never waits for events that are not coming.
func TestLoneEventsCommitAlone(t *testing.T) {
	h := startHarness(t, "")
	h.surface("sf", "s1", "n1", "claude")
	before := h.e.Stats()
	const n = 20
	for i := range n {
		id := fmt.Sprintf("e%d", i)
		h.mustPost(evt{id: id, run: "r", surface: "sf", kind: proto.KindRunning, hook: "PostToolUse"})
		st := h.e.Stats()
		if st.Events-before.Events != int64(i+1) || st.Batches-before.Batches != int64(i+1) {
			t.Fatalf("after event %d acknowledged: %d events in %d commits", i, st.Events-before.Events, st.Batches-before.Batches)
		}
	}
}

// TestWriterWaitsForConcurrentClients: once several clients' events have
// shared a commit, the writer holds the next batch until as many have
// joined it (or a short while passes), since clients in other processes
// need the processor to send theirs. The hold is raised far above its
// default here so that only the events can end it.
func TestWriterWaitsForConcurrentClients(t *testing.T) {
	h := startHarness(t, "", func(c *Config) { c.maxHold = time.Minute })
	h.surface("sf", "s1", "n1", "claude")
	emit := func(id string) {
		ev := proto.Event{SchemaVersion: 1, ID: proto.RawID{RawValue: id}, RunID: proto.RawID{RawValue: "r"},
			SurfaceID: proto.RawID{RawValue: "sf"}, Provider: "claude", Kind: proto.KindRunning,
			HookName: "muster.test", OccurredAt: h.clock.Now()}
		if ins, err := h.e.Emit(t.Context(), ev); err != nil || !ins {
			t.Errorf("event %s: inserted %v, %v", id, ins, err)
		}
	}
	// Two events in one commit, queued while the writer is busy with an
	// operation that waits for them.
	running, queued := make(chan struct{}), make(chan struct{})
	opDone := make(chan outcome, 1)
	go func() {
		opDone <- h.e.submit(&pending{op: func(*runstate.Board) ([]runstate.Event, any, error) {
			close(running)
			<-queued
			return nil, nil, nil
		}})
	}()
	<-running
	var wg sync.WaitGroup
	wg.Go(func() { emit("a1") })
	wg.Go(func() { emit("a2") })
	deadline := time.Now().Add(10 * time.Second)
	for len(h.e.queue) < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(queued)
	<-opDone
	wg.Wait()
	// Nothing left for the periodic snapshot, whose operation would end
	// the hold below.
	if err := h.e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := h.e.Stats()
	// The next event waits for a second one rather than committing alone.
	wg.Go(func() { emit("b1") })
	for h.e.Stats().Held == before.Held && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if h.e.Stats().Held == before.Held {
		t.Fatal("the writer did not hold the batch after a shared commit")
	}
	emit("b2")
	wg.Wait()
	st := h.e.Stats()
	if st.Events-before.Events != 2 || st.Batches-before.Batches != 1 {
		t.Errorf("b1 and b2: %d events in %d commits, want 2 in 1", st.Events-before.Events, st.Batches-before.Batches)
	}
}
