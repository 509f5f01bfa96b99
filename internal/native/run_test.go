package native

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/musterhq/muster/internal/hookinstall"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
)

func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder(t)
		e := New(Config{Emit: rec.Emit})
		table := map[int]procInfo{100: {Comm: "bash"}, 200: {Comm: "opencode", Argv: []string{"opencode"}}}
		alive := map[int]bool{100: true, 200: true}
		e.inspect = func(pid int) (procInfo, error) {
			if info, ok := table[pid]; ok {
				return info, nil
			}
			return procInfo{}, os.ErrNotExist
		}
		e.alive = func(pgid int) bool { return alive[pgid] }
		e.cwdOf = func(int) string { return "" }
		p := &pane{pgid: 100}

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		e.SurfaceStarted(Surface{ID: "s1", Provider: "shell", PID: 100, ForegroundPGID: p.ForegroundPGID})
		synctest.Wait()

		p.fg(200)
		time.Sleep(DefaultPoll)
		synctest.Wait()
		if n := rec.count(); n != 1 {
			t.Fatalf("%d events after a poll, want the launch", n)
		}
		if err := e.Run(ctx); err == nil {
			t.Error("a second Run did not fail")
		}

		// The shell's D wakes the loop at once: no time passes here.
		alive[200] = false
		p.fg(100)
		e.Signals("s1", []termsignal.Signal{promptD(0)})
		synctest.Wait()
		if n := rec.count(); n != 2 {
			t.Fatalf("%d events after the D mark, want 2", n)
		}

		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v", err)
		}
	})
}

func TestHookStatus(t *testing.T) {
	home := t.TempDir()
	env := hookinstall.Env{Home: home, Getenv: func(k string) string {
		switch k {
		case "CLAUDE_CONFIG_DIR":
			return filepath.Join(home, ".claude")
		case "CODEX_HOME":
			return filepath.Join(home, ".codex")
		}
		return ""
	}}
	const muster = "/usr/local/bin/muster"
	if _, err := hookinstall.Setup(env, "claude", muster); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: t0}
	installed := HookStatus(env, muster, 10*time.Second, clk.Now)
	for _, tt := range []struct {
		provider string
		want     bool
	}{{"claude", true}, {"codex", false}, {"shell", false}, {"", false}} {
		if got := installed(tt.provider); got != tt.want {
			t.Errorf("HookStatus(%q) = %v, want %v", tt.provider, got, tt.want)
		}
	}
	// Another muster binary's entries still run hooks: outdated counts.
	if !HookStatus(env, "/opt/other/muster", time.Second, clk.Now)("claude") {
		t.Error("outdated entries do not count as installed")
	}
	if _, err := hookinstall.Remove(env, "claude"); err != nil {
		t.Fatal(err)
	}
	if !installed("claude") {
		t.Error("status read again within the ttl")
	}
	clk.Advance(10 * time.Second)
	if installed("claude") {
		t.Error("removed hooks still installed after the ttl")
	}
}

// TestFastPollAfterAnAnswer: once a key answers a dialog, Run reads the
// panes every fastPoll for fastFor (a denial shows only in the transcript),
// then once per poll again.
func TestFastPollAfterAnAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder(t)
		e := New(Config{Emit: rec.Emit, CurrentRun: func(string) CurrentRun {
			return CurrentRun{RunID: "R", State: proto.StateWaitingApproval, Provider: "claude"}
		}})
		e.inspect = func(int) (procInfo, error) { return procInfo{Comm: "bash"}, nil }
		var polls atomic.Int64
		e.SurfaceStarted(Surface{ID: "s1", Provider: "shell", PID: 100, ForegroundPGID: func() (int, error) {
			polls.Add(1)
			return 100, nil
		}})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		synctest.Wait() // the poll SurfaceStarted asked for
		count := func(d time.Duration) int64 {
			n := polls.Load()
			time.Sleep(d)
			synctest.Wait()
			return polls.Load() - n
		}
		if n := count(3 * DefaultPoll); n != 3 {
			t.Errorf("%d polls in 3 poll intervals", n)
		}
		e.Input("s1", []byte("\r"))
		synctest.Wait()
		if rec.count() != 1 {
			t.Fatalf("the answer was not recorded: %v", rec.lines(nil))
		}
		if n := count(time.Second); n < 5 {
			t.Errorf("%d polls in the second after the answer, want every %s", n, fastPoll)
		}
		time.Sleep(fastFor)
		synctest.Wait()
		if n := count(3 * DefaultPoll); n != 3 {
			t.Errorf("%d polls in 3 poll intervals after the fast period", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v", err)
		}
	})
}
