// Package poll waits in tests for a condition that another process or
// goroutine makes true, instead of a loop around time.Sleep in every test.
//
//	poll.Wait(t, 20*time.Second, func() bool { return strings.Contains(screen(), "ready") },
//		func() string { return "the prompt; screen:\n" + screen() })
//
// The condition is checked at once, then after pauses that start at a
// millisecond and grow to MaxInterval, so a fast condition is seen quickly
// and a slow one does not busy the machine. The timeout only bounds a
// failing test: it is never an assertion about how fast anything is, so
// make it generous. On timeout the condition is checked one last time, so a
// slow machine that paused the test past the deadline does not fail it.
package poll

import (
	"testing"
	"time"
)

const (
	// MinInterval is the first pause between two checks.
	MinInterval = time.Millisecond
	// MaxInterval is the longest pause between two checks.
	MaxInterval = 50 * time.Millisecond
)

// Until checks cond until it returns true or timeout has passed, and
// reports whether it returned true.
func Until(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := MinInterval
	for {
		if cond() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return cond()
		}
		time.Sleep(min(pause, left))
		pause = min(pause*2, MaxInterval)
	}
}

// Wait is Until that fails t when cond never holds: "gave up after TIMEOUT
// waiting for " and what describe returns (called only then, so it may
// gather state: a screen, a log).
func Wait(t testing.TB, timeout time.Duration, cond func() bool, describe func() string) {
	t.Helper()
	if !Until(timeout, cond) {
		t.Fatalf("gave up after %s waiting for %s", timeout, describe())
	}
}

// Value checks get until ok accepts what it returns, and returns that
// value; when ok never does, it fails t with describe of the last value.
func Value[T any](t testing.TB, timeout time.Duration, get func() T, ok func(T) bool, describe func(last T) string) T {
	t.Helper()
	var last T
	if !Until(timeout, func() bool { last = get(); return ok(last) }) {
		t.Fatalf("gave up after %s waiting for %s", timeout, describe(last))
	}
	return last
}
