package native

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
)

func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder(t)
		e := New(Config{Events: rec})
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

// TestFastPollAfterAnAnswer: once a key answers a dialog, Run reads the
// panes every fastPoll for fastFor (a denial shows only in the transcript),
// then once per poll again.
func TestFastPollAfterAnAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder(t)
		e := New(Config{Events: rec, Runs: runsFunc(func(string) CurrentRun {
			return CurrentRun{RunID: "R", State: proto.StateWaitingApproval, Provider: "claude"}
		})})
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
