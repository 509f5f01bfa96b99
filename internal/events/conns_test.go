package events

import (
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// socketPair returns the near end of a fresh Unix stream socket pair; the
// far end is closed with the test.
func socketPair(t *testing.T) *net.UnixConn {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "pair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.(*net.UnixConn)
		t.Cleanup(func() { c.Close() })
	}
	return conns[0]
}

// TestConnCaps: past the per-process cap the process's oldest idle
// connection goes; past the total cap, anyone's oldest idle one; a
// connection whose request has been read is never dropped, and when none
// is idle the new one is refused.
func TestConnCaps(t *testing.T) {
	cs := newConns(3, 2)
	byName := map[string]*conn{}
	var dropped []string
	admit := func(name string, pid int) bool {
		t.Helper()
		before := map[string]bool{}
		for n, cn := range byName {
			before[n] = cn.dropped
		}
		cn, _, ok := cs.admit(socketPair(t), pid)
		for n, cn := range byName {
			if cn.dropped && !before[n] {
				dropped = append(dropped, n)
			}
		}
		if ok {
			byName[name] = cn
		}
		return ok
	}
	admit("a1", 1)
	admit("a2", 1)
	admit("a3", 1) // a1 goes: process 1 is at its cap
	admit("b1", 2)
	if !cs.busy(byName["a2"]) || !cs.busy(byName["b1"]) {
		t.Fatal("busy on a live connection")
	}
	admit("c1", 3) // total cap: the oldest idle is a3 (a2 and b1 are busy)
	admit("c2", 3) // c1 is the only idle one left
	if diff := cmp.Diff([]string{"a1", "a3", "c1"}, dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if cs.busy(byName["a1"]) {
		t.Error("busy on a dropped connection")
	}
	cs.busy(byName["c2"])
	if admit("d1", 4) {
		t.Error("admitted a connection with none idle to drop")
	}
	if total, of3 := cs.counts(3); total != 3 || of3 != 1 {
		t.Errorf("counts = %d, %d", total, of3)
	}
	// a3 was dropped, so its handler's done changes nothing.
	cs.done(byName["a3"])
	cs.done(byName["a2"])
	if total, of1 := cs.counts(1); total != 2 || of1 != 0 {
		t.Errorf("counts after done = %d, %d", total, of1)
	}
	if _, ok := cs.peers[1]; ok {
		t.Error("a process with no connections is still tracked")
	}
	var b [1]byte
	if _, err := byName["a1"].c.Read(b[:]); err == nil {
		t.Error("a dropped connection is still open")
	}
}
