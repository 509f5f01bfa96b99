package hookevent

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestStateFileLifecycle(t *testing.T) {
	dir := filepath.Join(shortDir(t), "hookstate")
	sf, err := openState(dir, "claude", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if st := sf.load("s1"); st.Session != "s1" || st.Run != "" {
		t.Fatalf("fresh state %+v", st)
	}
	want := &State{Session: "s1", Run: "r", Open: true, Last: "started", Recent: []string{"q"}}
	if err := sf.save(want); err != nil {
		t.Fatal(err)
	}
	sf.Close()
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir: %v %v", fi, err)
	}

	sf, err = openState(dir, "claude", "s1")
	if err != nil {
		t.Fatal(err)
	}
	got := sf.load("s1")
	if got.Run != "r" || !got.Open || got.Last != "started" || len(got.Recent) != 1 {
		t.Fatalf("reloaded %+v", got)
	}
	// A shorter state replaces a longer one completely.
	if err := sf.save(&State{Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	sf.Close()
	sf, _ = openState(dir, "claude", "s1")
	if got := sf.load("s1"); got.Run != "" {
		t.Fatalf("after shrinking: %+v", got)
	}
	if err := sf.remove(); err != nil {
		t.Fatal(err)
	}
	sf.Close()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("state file left after remove: %v", entries)
	}
}

func TestStateFileRejectsGarbageAndForeignSessions(t *testing.T) {
	dir := filepath.Join(shortDir(t), "hookstate")
	sf, err := openState(dir, "gemini", "s1")
	if err != nil {
		t.Fatal(err)
	}
	name := sf.f.Name()
	sf.Close()
	for _, content := range []string{"{not json", `{"session":"other","run":"r","open":true}`, `[]`} {
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		sf, err := openState(dir, "gemini", "s1")
		if err != nil {
			t.Fatal(err)
		}
		if st := sf.load("s1"); st.Session != "s1" || st.Run != "" || st.Open {
			t.Errorf("content %q read as %+v", content, st)
		}
		sf.Close()
	}
}

func TestStateDirNeedsTheRuntimeDir(t *testing.T) {
	dir := filepath.Join(shortDir(t), "missing-runtime", "hookstate")
	if _, err := openState(dir, "codex", "s"); err == nil {
		t.Fatal("state dir created without its parent")
	}
	if _, err := os.Stat(filepath.Dir(dir)); !os.IsNotExist(err) {
		t.Errorf("the runtime dir was created: %v", err)
	}
}

func TestStateFileSerializesUpdates(t *testing.T) {
	dir := filepath.Join(shortDir(t), "hookstate")
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sf, err := openState(dir, "opencode", "ses")
			if err != nil {
				t.Error(err)
				return
			}
			defer sf.Close()
			st := sf.load("ses")
			st.Recent = append(st.Recent, fmt.Sprint(i))
			if err := sf.save(st); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	sf, err := openState(dir, "opencode", "ses")
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	if got := sf.load("ses"); len(got.Recent) != n {
		t.Fatalf("%d of %d updates survived: %v", len(got.Recent), n, got.Recent)
	}
}
