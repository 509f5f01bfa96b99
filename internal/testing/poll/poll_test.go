package poll

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The tests run in a synctest bubble: its clock moves only when every
// goroutine sleeps, so the pauses are exact and take no real time.

func TestUntilChecksAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !Until(time.Minute, func() bool { return true }) {
			t.Fatal("Until = false for a condition that holds")
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("Until paused %s before the first check", d)
		}
	})
}

func TestUntilBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var at []time.Duration
		start := time.Now()
		ok := Until(time.Minute, func() bool {
			at = append(at, time.Since(start))
			return len(at) == 10
		})
		if !ok {
			t.Fatal("Until = false")
		}
		var pauses []time.Duration
		for i := 1; i < len(at); i++ {
			pauses = append(pauses, at[i]-at[i-1])
		}
		ms := time.Millisecond
		want := []time.Duration{1 * ms, 2 * ms, 4 * ms, 8 * ms, 16 * ms, 32 * ms, 50 * ms, 50 * ms, 50 * ms}
		if !slices.Equal(pauses, want) {
			t.Fatalf("pauses = %v, want %v", pauses, want)
		}
	})
}

func TestUntilGivesUpAfterTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var last time.Duration
		calls := 0
		if Until(time.Second, func() bool { calls++; last = time.Since(start); return false }) {
			t.Fatal("Until = true for a condition that never holds")
		}
		if last != time.Second {
			t.Fatalf("last check at %s, want at the deadline", last)
		}
		// 1+2+…+32 ms, then 50 ms pauses up to the deadline: bounded work.
		if calls < 20 || calls > 30 {
			t.Fatalf("%d checks in a second", calls)
		}
	})
}

// TestUntilLastCheck: a test paused past its deadline (a loaded machine)
// still sees a condition that holds by then.
func TestUntilLastCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ok := Until(100*time.Millisecond, func() bool { return time.Since(start) >= 100*time.Millisecond })
		if !ok {
			t.Fatal("Until = false, though the condition held at the deadline")
		}
	})
}

// fakeTB records what Wait reports.
type fakeTB struct {
	testing.TB
	fatal string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
}

func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTB{TB: t}
		n := 0
		Wait(f, time.Second, func() bool { n++; return n == 3 }, func() string { panic("described a success") })
		if f.fatal != "" {
			t.Fatalf("Wait failed: %s", f.fatal)
		}
		Wait(f, 2*time.Second, func() bool { return false }, func() string { return "the prompt; screen:\n$ " })
		if want := "gave up after 2s waiting for the prompt; screen:\n$ "; f.fatal != want {
			t.Fatalf("Wait reported %q, want %q", f.fatal, want)
		}
	})
}

func TestValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTB{TB: t}
		n := 0
		get := func() int { n++; return n }
		if got := Value(f, time.Second, get, func(v int) bool { return v == 4 }, func(int) string { return "" }); got != 4 || f.fatal != "" {
			t.Fatalf("Value = %d (%q), want 4", got, f.fatal)
		}
		Value(f, time.Second, get, func(v int) bool { return v < 0 }, func(v int) string { return fmt.Sprintf("a negative count, last %d", v) })
		if !strings.HasPrefix(f.fatal, "gave up after 1s waiting for a negative count, last ") || strings.HasSuffix(f.fatal, "last 4") {
			t.Fatalf("Value reported %q", f.fatal)
		}
	})
}
