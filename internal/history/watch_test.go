package history

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/musterhq/muster/internal/testing/poll"
	"github.com/musterhq/muster/internal/transcript"
)

// eventually polls cond; the deadline only bounds a broken watcher.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Wait(t, 15*time.Second, cond, func() string { return what })
}

func TestWatch(t *testing.T) {
	home := t.TempDir()
	rootA := filepath.Join(home, "a")
	rootB := filepath.Join(home, "later", "deep", "b") // does not exist yet
	if err := os.MkdirAll(rootA, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSession(t, filepath.Join(rootA, "old.sess"), testSession{ID: "old", Title: "before the watch", Prompts: 1, Started: t0})
	src := &testSource{name: "fake", roots: []string{rootA, rootB}}
	x := openIndex(t, "v1")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, x, []transcript.Source{src}, transcript.Env{Home: home}, slog.New(slog.NewTextHandler(t.Output(), nil)))
	}()
	has := func(want ...string) func() bool {
		return func() bool {
			got, err := x.List(context.Background(), Query{})
			if err != nil {
				t.Fatal(err)
			}
			return slices.Equal(ids(got), want)
		}
	}
	eventually(t, "the first refresh", has("old"))

	writeSession(t, filepath.Join(rootA, "p", "s1.sess"), testSession{ID: "s1", Prompts: 1, Started: t0})
	eventually(t, "a file in a new subdirectory", has("old", "s1"))

	writeSession(t, filepath.Join(rootA, "p", "q", "r", "s2.sess"), testSession{ID: "s2", Prompts: 1, Started: t0})
	eventually(t, "a file in new nested directories", has("old", "s1", "s2"))

	writeSession(t, filepath.Join(rootB, "s3.sess"), testSession{ID: "s3", Prompts: 1, Started: t0})
	eventually(t, "a file under a root that appeared later", has("old", "s1", "s2", "s3"))

	if err := os.Remove(filepath.Join(rootA, "p", "s1.sess")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a vanished file to drop out", has("old", "s2", "s3"))

	writeSession(t, filepath.Join(rootA, "p", "q", "r", "s2.sess"), testSession{ID: "s2", Title: "renamed title", Prompts: 1, Started: t0})
	eventually(t, "a changed file to be re-read", func() bool {
		got, _ := x.List(context.Background(), Query{Search: "renamed title"})
		return len(got) == 1
	})

	if err := os.RemoveAll(filepath.Join(home, "later")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a removed root's files to drop out", has("old", "s2"))
	writeSession(t, filepath.Join(rootB, "s4.sess"), testSession{ID: "s4", Prompts: 1, Started: t0})
	eventually(t, "a re-created root to be watched again", has("old", "s2", "s4"))

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Watch returned %v after cancel", err)
	}
}

// TestWatchFollowsAPathMadeAtOnce: `mkdir -p` makes the directories on the
// way to a missing root faster than their watches can be added. When the
// first one's creation is handled, deeper ones may exist already and have
// reported nothing: the deepest existing one is watched, so the root's
// own creation, and then its files, are seen.
func TestWatchFollowsAPathMadeAtOnce(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, "a", "b", "c")
	w := &watcher{sources: []transcript.Source{&testSource{name: "fake", roots: []string{root}}},
		env: transcript.Env{Home: home}, log: slog.New(slog.DiscardHandler), watched: map[string]bool{}}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Skip("no inotify here:", err)
	}
	defer fw.Close()
	w.fw = fw
	w.addAll()
	if !w.watched[home] {
		t.Fatalf("watched %v, want the root's nearest existing ancestor %s", w.watched, home)
	}
	// a and b made before the event of a is handled, c not yet.
	if err := os.MkdirAll(filepath.Join(home, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	dirty := make([]bool, 1)
	if !w.handle(fsnotify.Event{Name: filepath.Join(home, "a"), Op: fsnotify.Create}, dirty) {
		t.Fatal("the creation of a directory on the way to the root did not make a refresh due")
	}
	if !w.watched[filepath.Join(home, "a", "b")] {
		t.Fatalf("watched %v: b, made with a, is not, so c's creation would go unseen", w.watched)
	}
	// The root itself made before its parent's event is handled: its tree
	// is watched.
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.addRoot(root)
	if !w.watched[root] || !w.watched[filepath.Join(root, "d")] {
		t.Fatalf("watched %v: the root made at once is not", w.watched)
	}
}
