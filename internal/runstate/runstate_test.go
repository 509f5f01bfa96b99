package runstate

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/proto"
)

var t0 = time.Date(2026, 7, 16, 7, 0, 0, 0, time.UTC)

// ev builds an event of session "s1" on surface "sf1" at t0+at.
func ev(run string, kind proto.EventKind, at time.Duration) Event {
	return Event{
		ID: fmt.Sprintf("%s-%s-%d", run, kind, at), RunID: run, SessionID: "s1", SurfaceID: "sf1",
		Provider: "claude", Kind: kind, HookName: "Hook", OccurredAt: t0.Add(at),
		ReceivedAt: t0.Add(at), Source: SourceHook,
	}
}

func withSession(e Event, session, surface string) Event {
	e.SessionID, e.SurfaceID = session, surface
	e.ID += "-" + session
	return e
}

func withHook(e Event, hook string) Event { e.HookName = hook; e.ID += "-" + hook; return e }

// apply applies each event and returns the results.
func apply(b *Board, evs ...Event) []Result {
	var out []Result
	for _, e := range evs {
		out = append(out, b.Apply(e))
	}
	return out
}

// take returns the board's changes and clears them, as a snapshot does.
func take(b *Board) Changes {
	c := b.Changes()
	b.ClearChanges()
	return c
}

func openReasons(b *Board, now time.Time) []string {
	var out []string
	for _, it := range b.Items(now, false) {
		out = append(out, it.RunID+":"+string(it.Reason))
	}
	return out
}

const (
	started  = proto.KindStarted
	running  = proto.KindRunning
	input    = proto.KindInputRequested
	approval = proto.KindApprovalRequested
	success  = proto.KindSucceeded
	failure  = proto.KindFailed
	intr     = proto.KindInterrupted
	disc     = proto.KindDisconnected
)

func TestReducer(t *testing.T) {
	sec := time.Second
	tests := []struct {
		name        string
		events      []Event
		now         time.Duration // view time after t0
		wantState   proto.RunState
		wantRun     string
		wantEffects []Effect
		wantOpen    []string
	}{
		{
			name:        "start then running",
			events:      []Event{ev("r1", started, 0), ev("r1", running, sec)},
			now:         2 * sec,
			wantState:   proto.StateRunning,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectConfirmed},
		},
		{
			name:        "approval opens an item and running after it resolves it",
			events:      []Event{ev("r1", started, 0), ev("r1", approval, sec), ev("r1", running, 2*sec)},
			now:         3 * sec,
			wantState:   proto.StateRunning,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied, EffectApplied},
		},
		{
			name:        "waiting event for an unknown run implies the start",
			events:      []Event{ev("r1", approval, 0)},
			now:         sec,
			wantState:   proto.StateWaitingApproval,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied},
			wantOpen:    []string{"r1:approval-requested"},
		},
		{
			name:        "terminal event for an unknown run implies the start",
			events:      []Event{ev("r1", failure, 0)},
			now:         sec,
			wantState:   proto.StateFailed,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied},
			wantOpen:    []string{"r1:failed"},
		},
		{
			name:        "terminal states are final",
			events:      []Event{ev("r1", started, 0), ev("r1", success, sec), ev("r1", running, 2*sec), ev("r1", failure, 3*sec)},
			now:         4 * sec,
			wantState:   proto.StateSucceeded,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied, EffectFinal, EffectFinal},
		},
		{
			name:        "a late waiting event never moves a run backwards",
			events:      []Event{ev("r1", started, 0), ev("r1", running, 10*sec), ev("r1", approval, 5*sec)},
			now:         11 * sec,
			wantState:   proto.StateRunning,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectConfirmed, EffectLate},
		},
		{
			name:        "a late approval after the run resumed opens nothing",
			events:      []Event{ev("r1", approval, 0), ev("r1", running, 10*sec), ev("r1", approval, 3*sec)},
			now:         11 * sec,
			wantState:   proto.StateRunning,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied, EffectLate},
		},
		{
			name:        "a late terminal event still ends the run",
			events:      []Event{ev("r1", started, 0), ev("r1", running, 10*sec), ev("r1", interrupt(), 5*sec)},
			now:         11 * sec,
			wantState:   proto.StateInterrupted,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectConfirmed, EffectApplied},
		},
		{
			name:        "equal times apply in arrival order",
			events:      []Event{ev("r1", started, 0), ev("r1", approval, sec), ev("r1", input, sec)},
			now:         2 * sec,
			wantState:   proto.StateWaitingInput,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied, EffectApplied},
			wantOpen:    []string{"r1:input-requested"},
		},
		{
			name: "Claude Notification permission_prompt after PermissionRequest opens no second item",
			events: []Event{
				withHook(ev("r1", started, 0), "UserPromptSubmit"),
				withHook(ev("r1", approval, sec), "PermissionRequest"),
				withHook(ev("r1", approval, 7*sec), "Notification"),
			},
			now:         8 * sec,
			wantState:   proto.StateWaitingApproval,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied, EffectConfirmed},
			wantOpen:    []string{"r1:approval-requested"},
		},
		{
			name:        "input then approval swaps the item",
			events:      []Event{ev("r1", input, 0), ev("r1", approval, sec)},
			now:         2 * sec,
			wantState:   proto.StateWaitingApproval,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied},
			wantOpen:    []string{"r1:approval-requested"},
		},
		{
			name:        "interrupted opens no item and resolves the approval",
			events:      []Event{ev("r1", approval, 0), ev("r1", intr, sec)},
			now:         2 * sec,
			wantState:   proto.StateInterrupted,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied},
		},
		{
			name:        "disconnect opens an item",
			events:      []Event{ev("r1", started, 0), ev("r1", disc, sec)},
			now:         2 * sec,
			wantState:   proto.StateDisconnected,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied},
			wantOpen:    []string{"r1:disconnected"},
		},
		{
			name:        "a newer run becomes current and supersedes the older run's items",
			events:      []Event{ev("r1", approval, 0), ev("r2", started, 10*sec)},
			now:         11 * sec,
			wantState:   proto.StateRunning,
			wantRun:     "r2",
			wantEffects: []Effect{EffectApplied, EffectApplied},
		},
		{
			name:        "events of an older run arriving late do not make it current",
			events:      []Event{ev("r2", started, 10*sec), ev("r1", started, 0), ev("r1", failure, 5*sec)},
			now:         11 * sec,
			wantState:   proto.StateRunning,
			wantRun:     "r2",
			wantEffects: []Effect{EffectApplied, EffectApplied, EffectApplied},
		},
		{
			name:        "duplicated start is evidence only",
			events:      []Event{ev("r1", started, 0), ev("r1", approval, sec), ev("r1", started, 2*sec)},
			now:         3 * sec,
			wantState:   proto.StateWaitingApproval,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied, EffectConfirmed},
			wantOpen:    []string{"r1:approval-requested"},
		},
		{
			name:        "idle after the quiet time",
			events:      []Event{ev("r1", started, 0), ev("r1", success, sec)},
			now:         sec + 2*time.Minute,
			wantState:   proto.StateIdle,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied},
		},
		{
			name:        "not idle a moment before the quiet time",
			events:      []Event{ev("r1", started, 0), ev("r1", success, sec)},
			now:         sec + 2*time.Minute - time.Nanosecond,
			wantState:   proto.StateSucceeded,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied},
		},
		{
			name:        "an ignored event after the end restarts the quiet time",
			events:      []Event{ev("r1", started, 0), ev("r1", success, sec), ev("r1", running, time.Minute)},
			now:         sec + 2*time.Minute,
			wantState:   proto.StateSucceeded,
			wantRun:     "r1",
			wantEffects: []Effect{EffectApplied, EffectApplied, EffectFinal},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBoard(Rules{})
			res := apply(b, tt.events...)
			var effects []Effect
			for _, r := range res {
				effects = append(effects, r.Effect)
			}
			if diff := cmp.Diff(tt.wantEffects, effects); diff != "" {
				t.Errorf("effects (-want +got):\n%s", diff)
			}
			v := b.Session("s1", t0.Add(tt.now))
			if v.State != tt.wantState || v.Run.RunID != tt.wantRun {
				t.Errorf("session state = %s (run %s), want %s (run %s)", v.State, v.Run.RunID, tt.wantState, tt.wantRun)
			}
			if diff := cmp.Diff(tt.wantOpen, openReasons(b, t0.Add(tt.now))); diff != "" {
				t.Errorf("open items (-want +got):\n%s", diff)
			}
			if v.OpenItems != len(tt.wantOpen) {
				t.Errorf("view counts %d open items, want %d", v.OpenItems, len(tt.wantOpen))
			}
		})
	}
}

func interrupt() proto.EventKind { return proto.KindInterrupted }

func TestLongRunBoundary(t *testing.T) {
	tests := []struct {
		name     string
		events   []Event
		wantItem bool
	}{
		{"exactly five minutes", []Event{ev("r1", started, 0), ev("r1", success, 5*time.Minute)}, true},
		{"a nanosecond short", []Event{ev("r1", started, 0), ev("r1", success, 5*time.Minute-time.Nanosecond)}, false},
		{"six minutes", []Event{ev("r1", started, 0), ev("r1", running, time.Minute), ev("r1", success, 6*time.Minute)}, true},
		{"implied start counts from the first event", []Event{ev("r1", running, time.Minute), ev("r1", success, 5*time.Minute)}, false},
		{"a late start lengthens the run", []Event{ev("r1", running, time.Minute), ev("r1", started, 0), ev("r1", success, 5*time.Minute)}, true},
		{"failure is an item whatever its length", []Event{ev("r1", started, 0), ev("r1", failure, time.Second)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBoard(Rules{})
			apply(b, tt.events...)
			items := b.Items(t0.Add(10*time.Minute), false)
			if got := len(items) == 1; got != tt.wantItem {
				t.Fatalf("items = %+v, want one: %v", items, tt.wantItem)
			}
			if tt.wantItem && items[0].Reason == proto.KindSucceeded && items[0].Message == "" {
				t.Error("long-run item has no message")
			}
		})
	}
}

func TestResolvedVisibility(t *testing.T) {
	b := NewBoard(Rules{})
	apply(b, ev("r1", approval, 0), ev("r2", failure, time.Second))
	items := b.Items(t0, false)
	// r2 superseded r1, resolving its approval item; r2's failure is open.
	if len(items) != 1 || items[0].Reason != proto.KindFailed || items[0].RunID != "r2" {
		t.Fatalf("open items = %+v", items)
	}
	if all := b.Items(t0.Add(time.Second), true); len(all) != 2 || all[0].Resolution != ResolvedSuperseded {
		t.Fatalf("all items = %+v", all)
	}
	ackAt := t0.Add(time.Hour)
	it, changed, err := b.Ack(items[0].ID, ackAt)
	if err != nil || !changed || it.Resolution != ResolvedAcknowledged {
		t.Fatalf("Ack = %+v, %v, %v", it, changed, err)
	}
	if got := b.Items(ackAt, false); len(got) != 0 {
		t.Fatalf("acknowledged item still open: %+v", got)
	}
	tests := []struct {
		name string
		at   time.Time
		want int
	}{
		{"just resolved", ackAt, 2},
		{"a nanosecond before a day", ackAt.Add(24*time.Hour - time.Nanosecond), 1},
		{"a day later", ackAt.Add(24 * time.Hour), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := b.Items(tt.at, true); len(got) != tt.want {
				t.Errorf("Items(all) = %d items, want %d: %+v", len(got), tt.want, got)
			}
		})
	}
	// The superseded item resolved at t0+1s: pruned a day after that.
	take(b)
	b.Prune(t0.Add(time.Second + 24*time.Hour))
	c := take(b)
	if len(c.DeletedItems) != 1 {
		t.Fatalf("pruned %v, want the superseded item only", c.DeletedItems)
	}
	if _, ok := b.Item(c.DeletedItems[0]); ok {
		t.Fatal("pruned item still on the board")
	}
	if _, changed, err := b.Ack(items[0].ID, ackAt.Add(time.Minute)); err != nil || changed {
		t.Errorf("second ack: changed=%v err=%v, want no change", changed, err)
	}
	if _, _, err := b.Ack(999, ackAt); !errors.Is(err, ErrNoItem) {
		t.Errorf("ack of unknown id: %v", err)
	}
}

// TestPreviewChangesNothing: a preview classifies events as Apply will,
// across events that build on each other, and leaves the board as it was.
func TestPreviewChangesNothing(t *testing.T) {
	b := NewBoard(Rules{})
	apply(b, ev("r1", started, 0))
	take(b)
	p := b.Preview()
	evs := []Event{ev("r1", approval, time.Second), ev("r2", started, 2*time.Second), ev("r1", running, 500*time.Millisecond),
		ev("r2", success, 3*time.Second), ev("r2", running, 4*time.Second)}
	var want []Effect
	for _, e := range evs {
		want = append(want, p.Effect(e))
		p.Add(e)
	}
	if v := b.Session("s1", t0.Add(5*time.Second)); v.State != proto.StateRunning || v.Run.RunID != "r1" {
		t.Fatalf("a preview changed the board: %+v", v)
	}
	if n := len(b.Items(t0, true)); n != 0 || b.Dirty() != 0 {
		t.Fatalf("a preview changed the board: %d items, %d dirty", n, b.Dirty())
	}
	var got []Effect
	for _, r := range apply(b, evs...) {
		got = append(got, r.Effect)
	}
	if diff := cmp.Diff([]Effect{EffectApplied, EffectApplied, EffectLate, EffectApplied, EffectFinal}, got); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("preview and Apply disagree (-preview +apply):\n%s", diff)
	}
	if c := take(b); len(c.Runs) != 2 || len(c.Items) != 1 {
		t.Fatalf("changes = %+v", c)
	}
}

// TestFutureDateCannotPinARun: a client's date is capped at receipt, so an
// event dated ahead of the clock neither keeps its run current nor makes the
// next real event late. Its evidence keeps the date the client sent.
func TestFutureDateCannotPinARun(t *testing.T) {
	future := ev("r1", running, 0)
	future.OccurredAt = t0.Add(30 * time.Second) // received at t0

	// Another run's approval request becomes current and opens its item.
	b := NewBoard(Rules{})
	apply(b, ev("r1", started, -time.Second), future)
	res := apply(b, ev("r2", approval, time.Second))
	if res[0].Effect != EffectApplied || len(res[0].Opened) != 1 {
		t.Fatalf("approval after a future-dated event: %+v", res[0])
	}
	v := b.Session("s1", t0.Add(2*time.Second))
	if v.Run.RunID != "r2" || v.State != proto.StateWaitingApproval || !v.LastEventAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("session = %s run %s, last event %v", v.State, v.Run.RunID, v.LastEventAt)
	}
	if got := openReasons(b, t0.Add(2*time.Second)); len(got) != 1 || got[0] != "r2:approval-requested" {
		t.Errorf("open items = %v", got)
	}

	// The same run's next real event is not late.
	b = NewBoard(Rules{})
	apply(b, ev("r1", started, -time.Second), future)
	res = apply(b, ev("r1", approval, time.Second))
	if res[0].Effect != EffectApplied || len(res[0].Opened) != 1 {
		t.Fatalf("same run's approval after a future-dated event: %+v", res[0])
	}

	// The run is dated by receipt; the evidence keeps the client's date.
	r := apply(NewBoard(Rules{}), future)[0].Run
	if !r.UpdatedAt.Equal(t0) || !r.StartedAt.Equal(t0) || !r.Last.OccurredAt.Equal(t0.Add(30*time.Second)) {
		t.Errorf("future-dated run: started %v, updated %v, evidence %v", r.StartedAt, r.UpdatedAt, r.Last.OccurredAt)
	}
}

func TestSurfaceAndSessionViews(t *testing.T) {
	b := NewBoard(Rules{})
	apply(b,
		withSession(ev("r1", success, 0), "s1", "old"),
		withSession(ev("r2", approval, time.Minute), "s1", "new"),
		withSession(ev("x1", started, 0), "s2", "other"),
	)
	now := t0.Add(time.Hour)
	if v := b.Surface("old", now); v.Run.RunID != "r1" || v.State != proto.StateIdle || v.Terminal != proto.StateSucceeded {
		t.Errorf("old surface view = %+v", v)
	}
	if v := b.Surface("new", now); v.Run.RunID != "r2" || v.State != proto.StateWaitingApproval || v.OpenItems != 1 {
		t.Errorf("new surface view = %+v", v)
	}
	if v := b.Session("s1", now); v.Run.RunID != "r2" || v.SurfaceID != "new" || v.OpenItems != 1 {
		t.Errorf("session view = %+v", v)
	}
	if v := b.Session("s2", now); v.State != proto.StateRunning {
		t.Errorf("other session view = %+v", v)
	}
	if v := b.Session("nope", now); v.HasRun || v.State != "" {
		t.Errorf("unknown session view = %+v", v)
	}
	if got := b.RunsOnSurface("new"); len(got) != 1 || got[0].RunID != "r2" {
		t.Errorf("RunsOnSurface = %+v", got)
	}
}

func TestSweepOpensItemsForCurrentRunsOnly(t *testing.T) {
	b := NewBoard(Rules{})
	apply(b, ev("r1", running, 0), ev("r2", approval, time.Second))
	un := b.Unfinished()
	if len(un) != 2 || un[0].RunID != "r1" || un[1].RunID != "r2" {
		t.Fatalf("Unfinished = %+v", un)
	}
	for _, r := range un {
		e := ev(r.RunID, disc, time.Hour)
		e.Source, e.HookName = SourceSweep, "muster.startupSweep"
		b.Apply(e)
	}
	got := openReasons(b, t0.Add(time.Hour))
	if diff := cmp.Diff([]string{"r2:disconnected"}, got); diff != "" {
		t.Errorf("open after sweep (-want +got):\n%s", diff)
	}
	if len(b.Unfinished()) != 0 {
		t.Error("sweep left unfinished runs")
	}
	v := b.Session("s1", t0.Add(time.Hour))
	if v.Run.Because.Source != SourceSweep || v.Run.Because.HookName != "muster.startupSweep" {
		t.Errorf("provenance = %+v", v.Run.Because)
	}
}

func TestLoadRebuildsTheBoard(t *testing.T) {
	b := NewBoard(Rules{})
	var runs []Run
	var items []Item
	for _, e := range []Event{ev("r1", approval, 0), ev("r1", running, time.Second), ev("r2", input, time.Minute),
		withSession(ev("q", failure, 0), "s2", "sf2")} {
		b.Apply(e)
		c := take(b)
		runs = upsertRuns(runs, c.Runs)
		items = upsertItems(items, c.Items)
	}
	re := NewBoard(Rules{})
	re.Load(runs, items)
	now := t0.Add(time.Hour)
	for _, id := range []string{"s1", "s2"} {
		if diff := cmp.Diff(b.Session(id, now), re.Session(id, now)); diff != "" {
			t.Errorf("session %s after load (-live +loaded):\n%s", id, diff)
		}
	}
	if diff := cmp.Diff(b.Items(now, true), re.Items(now, true)); diff != "" {
		t.Errorf("items after load (-live +loaded):\n%s", diff)
	}
	// New items continue the numbering.
	res := re.Apply(ev("r3", approval, 2*time.Minute))
	if len(res.Opened) != 1 || res.Opened[0].ID <= items[len(items)-1].ID {
		t.Errorf("new item id %+v does not follow %d", res.Opened, items[len(items)-1].ID)
	}
}

func upsertRuns(all, changed []Run) []Run {
	for _, r := range changed {
		found := false
		for i := range all {
			if all[i].Key() == r.Key() {
				all[i], found = r, true
			}
		}
		if !found {
			all = append(all, r)
		}
	}
	return all
}

func upsertItems(all, changed []Item) []Item {
	for _, it := range changed {
		found := false
		for i := range all {
			if all[i].ID == it.ID {
				all[i], found = it, true
			}
		}
		if !found {
			all = append(all, it)
		}
	}
	return all
}

func TestRemoveSessionAndPruneRuns(t *testing.T) {
	b := NewBoard(Rules{})
	apply(b, ev("r1", success, 0), ev("r2", approval, time.Second), withSession(ev("q", failure, 0), "s2", "sf2"))
	take(b)
	b.RemoveSession("s2")
	c := take(b)
	if len(c.DeletedRuns) != 1 || len(c.DeletedItems) != 1 {
		t.Fatalf("changes = %+v", c)
	}
	if v := b.Session("s2", t0); v.HasRun || v.OpenItems != 0 {
		t.Fatalf("removed session still viewable: %+v", v)
	}
	b.Prune(t0.Add(8 * 24 * time.Hour))
	c = take(b)
	// r1 ended long ago and is not current; r2 is current and open.
	if diff := cmp.Diff([]RunKey{{"s1", "r1"}}, c.DeletedRuns); diff != "" {
		t.Errorf("pruned runs (-want +got):\n%s", diff)
	}
}

func TestNonWireKindChangesNothing(t *testing.T) {
	b := NewBoard(Rules{})
	apply(b, ev("r1", started, 0))
	r := apply(b, ev("r1", proto.EventKind("bogus"), time.Second))
	if r[0].Effect != EffectFinal || b.Session("s1", t0).State != proto.StateRunning {
		t.Fatalf("bogus kind changed the run: %+v", r[0])
	}
}

// TestReplayFromASnapshot: a board loaded from a snapshot of its runs and
// items, with the events recorded after the snapshot applied again, is the
// live board, items included.
func TestReplayFromASnapshot(t *testing.T) {
	evs := []Event{ev("r1", approval, 0), ev("r1", running, time.Second), ev("r2", failure, time.Minute), ev("r3", input, 2*time.Minute)}
	live := NewBoard(Rules{})
	var runs []Run
	var items []Item
	for i, e := range evs {
		live.Apply(e)
		if i == 0 {
			c := take(live)
			runs, items = c.Runs, c.Items
		}
	}
	re := NewBoard(Rules{})
	re.Load(runs, items)
	for _, e := range evs[1:] {
		re.Apply(e)
	}
	now := t0.Add(time.Hour)
	if diff := cmp.Diff(live.Session("s1", now), re.Session("s1", now)); diff != "" {
		t.Errorf("session after replay (-live +replayed):\n%s", diff)
	}
	if diff := cmp.Diff(live.Items(now, true), re.Items(now, true)); diff != "" {
		t.Errorf("items after replay (-live +replayed):\n%s", diff)
	}
	if diff := cmp.Diff(take(live), take(re)); diff != "" {
		t.Errorf("changes to persist after replay (-live +replayed):\n%s", diff)
	}
}
