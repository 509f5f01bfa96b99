package daemon

import (
	"slices"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/proto"
)

// TestWatch: a watch stream starts with the sessions and the attention
// drawer, then pushes what changes as it happens (a rename, a pane's
// notification, a kill), leaving out the list that did not change.
func TestWatch(t *testing.T) {
	d := startDaemon(t)
	c := d.dial()
	c.must("new", proto.NewArgs{Name: "cat", Dir: t.TempDir(), Cmd: "cat", Cols: 60, Rows: 12}, nil)

	wc, err := client.Dial(t.Context(), d.dirs, "test-client")
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	var first proto.WatchUpdate
	if err := wc.Open(t.Context(), proto.OpWatch, nil, &first); err != nil {
		t.Fatal(err)
	}
	if len(first.Sessions) != 1 || first.Sessions[0].Name != "cat" || first.Sessions[0].State != "running" {
		t.Errorf("first push sessions = %+v", first.Sessions)
	}
	if first.Attention == nil || len(first.Attention) != 0 {
		t.Errorf("first push attention = %#v, want an empty list", first.Attention)
	}
	// A bound on a broken daemon, not a timing assertion.
	wc.Conn().SetReadDeadline(time.Now().Add(30 * time.Second))
	// next reads pushes until one satisfies ok, and returns it.
	next := func(what string, ok func(proto.WatchUpdate) bool) proto.WatchUpdate {
		t.Helper()
		for {
			var u proto.WatchUpdate
			if err := wc.Recv(&u); err != nil {
				t.Fatalf("waiting for %s: %v", what, err)
			}
			if u.Sessions == nil && u.Attention == nil {
				t.Errorf("a push with nothing in it")
			}
			if ok(u) {
				return u
			}
		}
	}
	named := func(name string) func(proto.WatchUpdate) bool {
		return func(u proto.WatchUpdate) bool {
			return slices.ContainsFunc(u.Sessions, func(s proto.SessionInfo) bool { return s.Name == name })
		}
	}

	c.must("rename", proto.RenameArgs{Name: "cat", NewName: "kitty"}, nil)
	if u := next("the rename", named("kitty")); u.Attention != nil {
		t.Errorf("a rename pushed the unchanged attention drawer again: %+v", u.Attention)
	}

	// cat prints the notification back: the pane asks for attention.
	c.must("send", proto.SendArgs{Name: "kitty", Text: "\x1b]9;need-you\x07", Enter: true}, nil)
	u := next("the notification's item", func(u proto.WatchUpdate) bool {
		return slices.ContainsFunc(u.Attention, func(it proto.AttentionItem) bool { return it.Open && it.SessionName == "kitty" })
	})
	if it := u.Attention[0]; it.Reason != "notification" || it.Message != "need-you" {
		t.Errorf("item = %+v", it)
	}

	c.must("kill", proto.Target{Name: "kitty"}, nil)
	next("the kill", func(u proto.WatchUpdate) bool { return u.Sessions != nil && len(u.Sessions) == 0 })
}
