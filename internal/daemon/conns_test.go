package daemon

import (
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// pipeConn returns the server end of a connected Unix socket pair.
func pipeConn(t *testing.T) *net.UnixConn {
	t.Helper()
	a, b, err := socketpair()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a
}

func socketpair() (*net.UnixConn, *net.UnixConn, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, err
	}
	conn := func(fd int) (*net.UnixConn, error) {
		f := os.NewFile(uintptr(fd), "socketpair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			return nil, err
		}
		return c.(*net.UnixConn), nil
	}
	a, err := conn(fds[0])
	if err != nil {
		syscall.Close(fds[1])
		return nil, nil, err
	}
	b, err := conn(fds[1])
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
}

func isClosed(c *net.UnixConn) bool {
	c.SetReadDeadline(time.Now())
	_, err := c.Read(make([]byte, 1))
	ne, ok := err.(net.Error)
	return err != nil && !(ok && ne.Timeout())
}

func TestConnTablePerProcessCapDropsThatProcessesOldestIdle(t *testing.T) {
	tab := newConnTable(100, 2)
	a1 := tab.admit(pipeConn(t), 1)
	a2 := tab.admit(pipeConn(t), 1)
	b1 := tab.admit(pipeConn(t), 2)
	if a1 == nil || a2 == nil || b1 == nil {
		t.Fatal("admission under the caps failed")
	}
	a3 := tab.admit(pipeConn(t), 1)
	if a3 == nil {
		t.Fatal("third connection of pid 1 refused although its first was idle")
	}
	if !isClosed(a1.conn) || isClosed(a2.conn) || isClosed(b1.conn) {
		t.Error("want exactly pid 1's oldest idle connection closed")
	}
	if n := tab.count(); n != 3 {
		t.Errorf("count = %d, want 3", n)
	}
	// None of pid 1's connections idle: the next is refused.
	tab.setIdle(a2, false)
	tab.setIdle(a3, false)
	if tab.admit(pipeConn(t), 1) != nil {
		t.Error("admitted past the per-process cap with every connection busy")
	}
}

func TestConnTableTotalCapDropsOldestIdle(t *testing.T) {
	tab := newConnTable(4, 10)
	var cs []*ctlConn
	for pid := 1; pid <= 4; pid++ {
		cs = append(cs, tab.admit(pipeConn(t), pid))
	}
	tab.setIdle(cs[0], false) // busy: never dropped
	// cs[1] goes busy and back to idle: now it is younger than cs[2].
	tab.setIdle(cs[1], false)
	tab.setIdle(cs[1], true)
	if tab.admit(pipeConn(t), 9) == nil {
		t.Fatal("refused although idle connections could make room")
	}
	if isClosed(cs[0].conn) || isClosed(cs[1].conn) || !isClosed(cs[2].conn) {
		t.Error("want the connection idle the longest (pid 3) dropped")
	}
	tab.remove(cs[2]) // its handler ends: idempotent
	if n := tab.count(); n != 4 {
		t.Errorf("count = %d, want 4", n)
	}
}

func TestConnTableKeepsRoomForShortRequests(t *testing.T) {
	tab := newConnTable(4, 10)
	var long []*ctlConn
	for pid := 1; pid <= 3; pid++ {
		c := tab.admit(pipeConn(t), pid)
		long = append(long, c)
	}
	if !tab.longLived(long[0]) || !tab.longLived(long[1]) {
		t.Fatal("first two long-lived connections refused")
	}
	if tab.longLived(long[2]) {
		t.Error("a third long-lived connection took more than half the slots")
	}
	tab.remove(long[0])
	if !tab.longLived(long[2]) {
		t.Error("long-lived slot not given back on remove")
	}
}

func TestLogLimiter(t *testing.T) {
	l := logLimiter{every: 10 * time.Second}
	t0 := time.Unix(1000, 0)
	if ok, n := l.allow(t0); !ok || n != 0 {
		t.Fatalf("first = %v, %d", ok, n)
	}
	for i := range 200 { // an accept loop failing every 50 ms
		if ok, _ := l.allow(t0.Add(time.Duration(i+1) * 40 * time.Millisecond)); ok {
			t.Fatalf("line %d logged within the interval", i)
		}
	}
	if ok, n := l.allow(t0.Add(10 * time.Second)); !ok || n != 200 {
		t.Errorf("after the interval = %v, %d suppressed; want true, 200", ok, n)
	}
}
