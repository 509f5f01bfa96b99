package native

import (
	"sync/atomic"
	"testing"

	"github.com/musterhq/muster/internal/termsignal"
)

// TestPlainForegroundInspectedSparingly: a pane whose foreground runs no
// agent (an idle shell) has its process read once per plainRecheck, not
// every poll, yet a new foreground group, a typed Enter or a shell's
// command mark gets it read at the next poll, and an agent started in
// place is found within plainRecheck.
func TestPlainForegroundInspectedSparingly(t *testing.T) {
	h := newHarness(t)
	var reads atomic.Int64
	inspect := h.e.inspect
	h.e.inspect = func(pid int) (procInfo, error) {
		reads.Add(1)
		return inspect(pid)
	}
	h.procs.set(100, "bash", "-bash")
	h.procs.set(200, "make", "make", "test")
	p := h.surface("s1", "shell", 100)
	polls := func(n int) int64 {
		before := reads.Load()
		for range n {
			h.poll()
		}
		return reads.Load() - before
	}
	if n := polls(5); n != 1 {
		t.Errorf("the idle shell was read %d times in 5 polls, want once", n)
	}
	p.fg(200)
	if n := polls(1); n != 1 {
		t.Errorf("a new foreground group was read %d times at the next poll, want once", n)
	}
	p.fg(100)
	polls(1)
	h.e.Input("s1", []byte("exec something\r"))
	if n := polls(1); n != 1 {
		t.Errorf("after a typed Enter the shell was read %d times at the next poll, want once", n)
	}
	h.e.Signals("s1", []termsignal.Signal{{Kind: termsignal.KindPrompt, Mark: 'C'}})
	if n := polls(1); n != 1 {
		t.Errorf("after a command mark the shell was read %d times at the next poll, want once", n)
	}
	// A script execs Claude Code in place: same group, no key, no mark.
	h.procs.set(100, "claude", "claude")
	found := false
	for i := 0; i < int(plainRecheck/DefaultPoll)+1 && !found; i++ {
		h.poll()
		h.e.lookup("s1").run.Lock()
		found = h.e.lookup("s1").agent != nil
		h.e.lookup("s1").run.Unlock()
	}
	if !found {
		t.Errorf("Claude Code started in place was not found within %s", plainRecheck)
	}
}
