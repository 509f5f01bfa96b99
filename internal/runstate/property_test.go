package runstate

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// TestInvariantsUnderShuffledDelivery applies random event streams, in
// shuffled order and in random batches, and checks the rules
// that must hold whatever the order.
func TestInvariantsUnderShuffledDelivery(t *testing.T) {
	kinds := []proto.EventKind{started, running, input, approval, success, failure, intr, disc}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var evs []Event
		for i := range 5 + rng.IntN(40) {
			run := fmt.Sprintf("r%d", rng.IntN(4))
			sess := fmt.Sprintf("s%d", rng.IntN(2))
			e := ev(run, kinds[rng.IntN(len(kinds))], time.Duration(rng.IntN(600))*time.Second)
			e = withSession(e, sess, "sf-"+sess)
			e.ID = fmt.Sprintf("e%d", i)
			evs = append(evs, e)
		}
		rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
		b := NewBoard(Rules{})
		ended := map[RunKey]proto.RunState{}
		sawTerminal := map[RunKey]bool{}
		for i := 0; i < len(evs); {
			// A batch is previewed first, as the event writer does before
			// it commits, and then applied.
			n := 1 + rng.IntN(4)
			batch := evs[i:min(i+n, len(evs))]
			i += len(batch)
			p := b.Preview()
			var want []Effect
			for _, e := range batch {
				want = append(want, p.Effect(e))
				p.Add(e)
			}
			for j, e := range batch {
				k := RunKey{e.SessionID, e.RunID}
				res := b.Apply(e)
				if res.Effect != want[j] {
					t.Fatalf("seed %d: Preview said %s, Apply did %s", seed, want[j], res.Effect)
				}
				if st, ok := ended[k]; ok && res.Run.State != st {
					t.Fatalf("seed %d: run %v left terminal state %s for %s", seed, k, st, res.Run.State)
				}
				if Terminal(res.Run.State) {
					ended[k] = res.Run.State
				}
				if e.Kind.Terminal() {
					sawTerminal[k] = true
				}
			}
			checkItems(t, seed, b)
		}
		for k := range sawTerminal {
			if r, _ := b.Run(k); !Terminal(r.State) {
				t.Fatalf("seed %d: run %v got a terminal event but is %s", seed, k, r.State)
			}
		}
	}
}

func checkItems(t *testing.T, seed uint64, b *Board) {
	t.Helper()
	seen := map[string]bool{}
	for _, it := range b.Items(t0.Add(time.Hour), false) {
		key := it.SessionID + "/" + it.RunID + "/" + string(it.Reason)
		if seen[key] {
			t.Fatalf("seed %d: two open items for %s", seed, key)
		}
		seen[key] = true
		r, ok := b.Run(RunKey{it.SessionID, it.RunID})
		if !ok {
			t.Fatalf("seed %d: open item %d for an unknown run", seed, it.ID)
		}
		if reasonFor(r.State) != it.Reason {
			t.Fatalf("seed %d: open %s item for a run in %s", seed, it.Reason, r.State)
		}
		if s := b.sessions[it.SessionID]; s.current != r.Key() {
			t.Fatalf("seed %d: open item %d for a run that is not current", seed, it.ID)
		}
	}
}
