package runstate

import (
	"slices"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

func notice(session, msg string, at time.Duration) Notice {
	return Notice{SessionID: session, SurfaceID: "sf1", Provider: "shell", Message: msg, At: t0.Add(at)}
}

func TestNotifyOpensOneItemPerSession(t *testing.T) {
	b := NewBoard(Rules{})
	it, eff := b.Notify(notice("s1", "build finished", 0))
	if eff != NoticeOpened || it.Reason != ReasonNotification || it.Message != "build finished" || it.RunID != "" {
		t.Fatalf("first notice: %v %+v", eff, it)
	}
	// A burst (bells, repeated notifications) is one item with the newest text.
	for i := range 5 {
		it2, eff := b.Notify(notice("s1", "bell", time.Duration(i+1)*time.Second))
		if eff != NoticeMerged || it2.ID != it.ID {
			t.Fatalf("notice %d: %v %+v", i, eff, it2)
		}
	}
	items := b.Items(t0.Add(time.Minute), false)
	if len(items) != 1 || items[0].Message != "bell" {
		t.Fatalf("items = %+v", items)
	}
	if v := b.Session("s1", t0); v.OpenItems != 1 || v.HasRun {
		t.Fatalf("view = %+v", v)
	}
	// Another session gets its own.
	if _, eff := b.Notify(notice("s2", "x", 0)); eff != NoticeOpened {
		t.Fatalf("s2: %v", eff)
	}
	// Persisted and loaded, the item is still the open one that merges.
	c := b.Changes()
	b2 := NewBoard(Rules{})
	b2.Load(nil, c.Items)
	if it3, eff := b2.Notify(notice("s1", "again", 9*time.Second)); eff != NoticeMerged || it3.ID != it.ID {
		t.Fatalf("after load: %v %+v", eff, it3)
	}
	// Acknowledged, the next notice opens a new item.
	if _, changed, err := b.Ack(it.ID, t0.Add(10*time.Second)); err != nil || !changed {
		t.Fatalf("ack: %v %v", changed, err)
	}
	if it4, eff := b.Notify(notice("s1", "later", 11*time.Second)); eff != NoticeOpened || it4.ID == it.ID {
		t.Fatalf("after ack: %v %+v", eff, it4)
	}
}

func TestNotifyFoldsIntoAgentRequest(t *testing.T) {
	b := NewBoard(Rules{})
	apply(b, ev("r1", started, 0), ev("r1", approval, time.Second))
	if _, eff := b.Notify(notice("s1", "Claude needs your permission", 2*time.Second)); eff != NoticeFolded {
		t.Fatalf("effect = %v, want folded", eff)
	}
	if got := openReasons(b, t0.Add(3*time.Second)); !slices.Equal(got, []string{"r1:approval-requested"}) {
		t.Fatalf("open = %v", got)
	}
}

func TestNotifyResolution(t *testing.T) {
	b := NewBoard(Rules{})
	// An approval request that follows the notification supersedes it.
	it, _ := b.Notify(notice("s1", "needs you", 0))
	res := apply(b, ev("r1", started, time.Second), ev("r1", approval, 2*time.Second))
	if len(res[0].Resolved) != 1 || res[0].Resolved[0].ID != it.ID || res[0].Resolved[0].Resolution != ResolvedSuperseded {
		// r1 becoming current (a new run) already supersedes it.
		t.Fatalf("start: %+v", res[0])
	}
	// While r1 is current, its own events leave a new notice alone...
	apply(b, ev("r1", running, 3*time.Second), ev("r1", success, 4*time.Second))
	it2, eff := b.Notify(notice("s1", "done", 5*time.Second))
	if eff != NoticeOpened {
		t.Fatalf("notice after run: %v", eff)
	}
	apply(b, ev("r1", success, 6*time.Second))
	if got, _ := b.Item(it2.ID); !got.Open() {
		t.Fatalf("resolved by the same run's event: %+v", got)
	}
	// ...and the next run supersedes it.
	res = apply(b, ev("r2", started, 7*time.Second))
	if len(res[0].Resolved) != 1 || res[0].Resolved[0].ID != it2.ID {
		t.Fatalf("r2: %+v", res[0])
	}
	// An input request of the current run resolves a notice it follows.
	it3, _ := b.Notify(notice("s1", "question", 8*time.Second))
	res = apply(b, ev("r2", input, 9*time.Second))
	if len(res[0].Opened) != 1 || len(res[0].Resolved) != 1 || res[0].Resolved[0].ID != it3.ID || res[0].Resolved[0].Resolution != ResolvedByRequest {
		t.Fatalf("input: %+v", res[0])
	}
}

func TestResumedResolvesDisconnected(t *testing.T) {
	b := NewBoard(Rules{})
	apply(b, ev("r1", started, 0), ev("r1", disc, time.Second))
	apply(b, withSession(ev("q1", started, 0), "s2", "sf2"), withSession(ev("q1", disc, time.Second), "s2", "sf2"))
	if got := b.Items(t0.Add(2*time.Second), false); len(got) != 2 {
		t.Fatalf("items = %+v", got)
	}
	out := b.Resumed("s1", t0.Add(3*time.Second))
	if len(out) != 1 || out[0].Reason != proto.KindDisconnected || out[0].Resolution != ResolvedResumed || out[0].SessionID != "s1" {
		t.Fatalf("resumed = %+v", out)
	}
	if got := openReasons(b, t0.Add(4*time.Second)); len(got) != 1 {
		t.Fatalf("open after resume = %v", got)
	}
	if out := b.Resumed("s1", t0.Add(5*time.Second)); len(out) != 0 {
		t.Fatalf("second resume resolved %+v", out)
	}
}

// A notice about a run (a usage limit the daemon found after the run's own
// failure, issue 25) is the same stop told again: it re-words the run's
// failed item instead of opening a second one.
func TestRunNoticeRewordsTheRunsFailure(t *testing.T) {
	b := NewBoard(Rules{})
	res := apply(b, ev("r1", started, 0), ev("r1", failure, time.Second))
	failed := res[1].Opened[0]
	n := notice("s1", "usage limit reached: resets at 2026-12-05T05:00:00Z", 2*time.Second)
	n.RunID = "r1"
	it, eff := b.Notify(n)
	if eff != NoticeMerged || it.ID != failed.ID || it.Reason != proto.KindFailed || it.Message != n.Message {
		t.Fatalf("notice about r1: %v %+v; want the failed item %d re-worded", eff, it, failed.ID)
	}
	if got := openReasons(b, t0.Add(3*time.Second)); !slices.Equal(got, []string{"r1:failed"}) {
		t.Fatalf("open = %v", got)
	}
	if c := b.Changes(); len(c.Items) != 1 || c.Items[0].Message != n.Message {
		t.Fatalf("changes = %+v; want the re-worded item to persist", c.Items)
	}
	// A notice about another run of the session is a notification.
	n.RunID = "r0"
	if _, eff := b.Notify(n); eff != NoticeOpened {
		t.Fatalf("notice about r0: %v", eff)
	}
}

// A notice about a run still open (Gemini CLI holding the turn at its limit
// dialog) is a notification item of that run, until the run's own item
// opens and takes over: one open item either way, also after a reload.
func TestRunNoticeGivesWayToTheRunsItem(t *testing.T) {
	b := NewBoard(Rules{})
	apply(b, ev("r1", started, 0), ev("r1", running, time.Second))
	n := notice("s1", "usage limit reached (no reset time given)", 2*time.Second)
	n.RunID = "r1"
	it, eff := b.Notify(n)
	if eff != NoticeOpened || it.Reason != ReasonNotification || it.RunID != "r1" {
		t.Fatalf("notice about open r1: %v %+v", eff, it)
	}
	b2 := NewBoard(Rules{})
	c := b.Changes()
	b2.Load(c.Runs, c.Items)
	for _, bb := range []*Board{b, b2} {
		if again, eff := bb.Notify(n); eff != NoticeMerged || again.ID != it.ID {
			t.Fatalf("the same notice again: %v %+v; want item %d merged", eff, again, it.ID)
		}
		res := apply(bb, ev("r1", failure, 3*time.Second))
		if len(res[0].Opened) != 1 || len(res[0].Resolved) != 1 || res[0].Resolved[0].ID != it.ID || res[0].Resolved[0].Resolution != ResolvedByRun {
			t.Fatalf("r1 failed: %+v; want its failed item to resolve the notice", res[0])
		}
		if got := openReasons(bb, t0.Add(4*time.Second)); !slices.Equal(got, []string{"r1:failed"}) {
			t.Fatalf("open = %v", got)
		}
	}
}
