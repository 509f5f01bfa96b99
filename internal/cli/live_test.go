package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// TestLiveLink: with a daemon running, history marks the conversation a
// pane holds and names the pane; show and replay accept the session's
// name for its current conversation.
func TestLiveLink(t *testing.T) {
	e := newCLIEnv(t)
	e.muster = startCannedDaemon(t, func(m *proto.Mux) {
		answer[proto.None](m, proto.OpList, []proto.SessionInfo{
			{Name: "fixer", Provider: "claude", State: "running", NativeSessionID: "cccccccc-0000-4000-8000-000000000003"},
			{Name: "gone", Provider: "claude", State: "exited", NativeSessionID: "aaaaaaaa-0000-4000-8000-000000000001"},
			{Name: "fresh", Provider: "claude", State: "running"},
		})
	})
	code, out, errOut := e.run("history")
	if code != 0 {
		t.Fatalf("history: %d %s", code, errOut)
	}
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "PANE") || !strings.Contains(out, "fixer") || strings.Contains(out, "gone") {
		t.Errorf("history:\n%s", out)
	}
	for _, l := range lines[1:] {
		if strings.Contains(l, "cccccccc") != strings.Contains(l, "fixer") {
			t.Errorf("row %q", l)
		}
	}
	_, out, _ = e.run("history", "--json")
	var list []historyEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	for _, h := range list {
		live := h.Live != nil && h.Live.Name == "fixer"
		if live != (h.ID == "cccccccc-0000-4000-8000-000000000003") {
			t.Errorf("%s live %+v", h.ID, h.Live)
		}
	}

	code, out, errOut = e.run("show", "fixer")
	if code != 0 || !strings.Contains(out, "prompt 1 of cccccccc") {
		t.Errorf("show fixer: %d %s\n%s", code, errOut, out)
	}
	code, _, errOut = e.run("show", "fresh")
	if code == 0 || !strings.Contains(errOut, "fresh has no conversation id yet") {
		t.Errorf("show fresh: %d %s", code, errOut)
	}
	// An id prefix still works beside the names.
	if code, out, _ = e.run("show", "aaaabbbb"); code != 0 || !strings.Contains(out, "prompt 1 of aaaabbbb") {
		t.Errorf("show by prefix: %d\n%s", code, out)
	}
}

// TestHistoryNoDaemon: without a daemon, history has no PANE column and
// starts none.
func TestHistoryNoDaemon(t *testing.T) {
	e := newCLIEnv(t)
	code, out, _ := e.run("history")
	if code != 0 || strings.Contains(out, "PANE") {
		t.Errorf("history: %d\n%s", code, out)
	}
}

// TestNewResume: new --resume reopens a past conversation with its
// provider's resume id, in its directory unless --dir.
func TestNewResume(t *testing.T) {
	e := newCLIEnv(t)
	proj := t.TempDir()
	p := filepath.Join(e.dir, "-proj", "dddddddd-0000-4000-8000-000000000004.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(claudeLines("dddddddd-0000-4000-8000-000000000004", proj, time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC), 1, false)), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []proto.NewArgs
	e.muster = startCannedDaemon(t, func(m *proto.Mux) {
		answer[proto.None](m, proto.OpList, []proto.SessionInfo{})
		proto.Handle(m, proto.OpNew, func(_ context.Context, a proto.NewArgs) (proto.SessionInfo, error) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, a)
			return proto.SessionInfo{Name: "claude-1"}, nil
		})
	})
	last := func() proto.NewArgs {
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			return proto.NewArgs{}
		}
		return got[len(got)-1]
	}
	code, out, errOut := e.run("new", "--resume", "dddd", "--detach")
	if a := last(); code != 0 || a.Provider != "claude" || a.ResumeID != "dddddddd-0000-4000-8000-000000000004" || a.Dir != proj || strings.TrimSpace(out) != "claude-1" {
		t.Errorf("new --resume dddd: %d %s %+v\n%s", code, errOut, a, out)
	}
	dir := t.TempDir()
	code, _, errOut = e.run("new", "--resume", "claude:cccccccc-0000-4000-8000-000000000003", "--dir", dir, "--detach")
	if a := last(); code != 0 || a.ResumeID != "cccccccc-0000-4000-8000-000000000003" || a.Dir != dir {
		t.Errorf("new --resume --dir: %d %s %+v", code, errOut, a)
	}
	n := len(got)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--resume", "claude:cccccccc-0000-4000-8000-000000000003"}, "is gone; give one with --dir"},
		{[]string{"codex", "--resume", "dddd"}, "is a claude conversation, not codex"},
		{[]string{"--resume", "dddd", "--cmd", "ls"}, "drop --cmd"},
		{[]string{"--resume", "zzzz"}, "no such session"},
	} {
		code, _, errOut := e.run(append([]string{"new", "--detach"}, c.args...)...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("new %v: %d %q, want %q", c.args, code, errOut, c.want)
		}
	}
	if len(got) != n {
		t.Errorf("a refused --resume reached the daemon: %+v", got[n:])
	}
}
