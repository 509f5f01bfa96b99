package events

import (
	"fmt"
	"sync"
	"testing"

	"github.com/musterhq/muster/internal/proto"
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
