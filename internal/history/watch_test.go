package history

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
