package events

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// The hostile-client half of the conformance suite (issue 9): clients that
// hold connections open, dribble, flood one surface, reuse another
// surface's event ids or date events in the future. Each case checks the
// exact answers and that nothing else was stored or changed.

// idleEnv makes the test binary hold idle connections instead of running
// the tests (holdIdle).
const idleEnv = "MUSTER_EVENTS_TEST_IDLE"

// holdIdle opens n connections to sock ("SOCK,N") and sends nothing. It
// prints "ready", then, on a line from stdin, how many the server still
// holds open.
func holdIdle(spec string) {
	sock, num, _ := strings.Cut(spec, ",")
	n, _ := strconv.Atoi(num)
	conns := openIdle(sock, n, func(err error) { fmt.Println("error:", err); os.Exit(1) })
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	fmt.Println(stillOpen(conns))
	os.Exit(0)
}

// openIdle opens n connections that send nothing. A full accept backlog is
// waited out, as a hostile client would.
func openIdle(sock string, n int, fail func(error)) []*net.UnixConn {
	conns := make([]*net.UnixConn, 0, n)
	for len(conns) < n {
		c, err := dialUnix(sock)
		if errors.Is(err, syscall.EAGAIN) {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil {
			fail(err)
			return conns
		}
		conns = append(conns, c)
	}
	return conns
}

// stillOpen counts the connections the server has neither answered nor
// closed: a peek that would block.
func stillOpen(conns []*net.UnixConn) int {
	open := 0
	var b [1]byte
	for _, c := range conns {
		raw, err := c.SyscallConn()
		if err != nil {
			continue
		}
		raw.Control(func(fd uintptr) {
			if _, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT); err == syscall.EAGAIN {
				open++
			}
		})
	}
	return open
}

// eventIDs lists the stored events as id@surface, in arrival order.
func (h *harness) eventIDs() []string {
	h.t.Helper()
	rows, err := h.st.Events(h.t.Context())
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, r.ID+"@"+r.SurfaceID)
	}
	return out
}

// stored checks that exactly the events want were added since before.
func (h *harness) stored(before []string, want ...string) {
	h.t.Helper()
	if got := h.eventIDs(); !slices.Equal(got, append(slices.Clone(before), want...)) {
		h.t.Errorf("stored events %v, want %v then %v", got, before, want)
	}
}

func TestHostileClients(t *testing.T) {
	t.Run("5000 idle connections from the hook's own process, then a real event", func(t *testing.T) {
		// Connections are dropped by the caps alone: the read deadline is
		// out of reach.
		h := startHarness(t, "", func(c *Config) { c.ReadTimeout = time.Minute })
		h.surface("sf", "s1", "api", "claude")
		before := h.eventIDs()
		conns := openIdle(h.sock, 5000, func(err error) { t.Fatal(err) })
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		if got := h.post(evt{id: "real", run: "r1", surface: "sf", kind: proto.KindStarted}); got != okInserted {
			t.Fatalf("real event beside 5000 idle connections: %q", got)
		}
		h.stored(before, "real@sf")
		// The oldest idle connections were closed unanswered to make room;
		// at most the per-process cap of them is still open.
		if open := stillOpen(conns); open > 64 || open < 32 {
			t.Errorf("%d idle connections still open, want the newest up to the cap of 64", open)
		}
		var b [64]byte
		conns[0].SetReadDeadline(time.Now().Add(time.Second))
		if n, err := conns[0].Read(b[:]); n != 0 || err == nil {
			t.Errorf("the oldest idle connection read %q, %v; want it closed unanswered", b[:n], err)
		}
		if total, _ := h.e.conns.counts(os.Getpid()); total > 64 {
			t.Errorf("the daemon holds %d connections", total)
		}
	})

	t.Run("5000 idle connections from another process, then a real event", func(t *testing.T) {
		h := startHarness(t, "", func(c *Config) { c.ReadTimeout = time.Minute })
		h.surface("sf", "s1", "api", "claude")
		before := h.eventIDs()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), idleEnv+"="+h.sock+",5000")
		cmd.Stderr = os.Stderr
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		sc := bufio.NewScanner(out)
		if !sc.Scan() || sc.Text() != "ready" {
			t.Fatalf("idle process: %q", sc.Text())
		}
		if total, ofPeer := h.e.conns.counts(cmd.Process.Pid); total > 64 || ofPeer > 64 {
			t.Errorf("the daemon holds %d connections, %d of the idle process", total, ofPeer)
		}
		for i := range 20 {
			id := fmt.Sprintf("real%d", i)
			if got := h.post(evt{id: id, run: "r1", surface: "sf", kind: proto.KindRunning}); got != okInserted {
				t.Fatalf("real event %d beside 5000 idle connections: %q", i, got)
			}
		}
		var want []string
		for i := range 20 {
			want = append(want, fmt.Sprintf("real%d@sf", i))
		}
		h.stored(before, want...)
		fmt.Fprintln(in)
		if !sc.Scan() {
			t.Fatal("idle process: no count")
		}
		if open, _ := strconv.Atoi(sc.Text()); open > 64 || open < 32 {
			t.Errorf("%s idle connections still open, want the newest up to the cap of 64", sc.Text())
		}
	})

	t.Run("slow loris", func(t *testing.T) {
		h := startHarness(t, "", func(c *Config) { c.ReadTimeout, c.MaxConnsPerPeer = time.Second, 1024 })
		h.surface("sf", "s1", "api", "claude")
		line := string(h.line(evt{id: "slow", run: "r1", surface: "sf", kind: proto.KindStarted}))
		before := h.eventIDs()
		dump := h.dump()
		var wg sync.WaitGroup
		answers := make(chan string, 200)
		for range 200 {
			wg.Go(func() { answers <- sendSlow(t, h.sock, line, 20*time.Millisecond) })
		}
		// While they dribble, a real event goes through.
		if got := h.post(evt{id: "real", run: "r1", surface: "sf", kind: proto.KindStarted}); got != okInserted {
			t.Fatalf("real event beside 200 slow clients: %q", got)
		}
		wg.Wait()
		close(answers)
		for got := range answers {
			if got != errResp(proto.ErrTimeout) {
				t.Errorf("slow client answered %q, want %q", got, errResp(proto.ErrTimeout))
			}
		}
		h.stored(before, "real@sf")
		if strings.Contains(h.dump(), "slow") || dump == h.dump() {
			t.Error("stored state is not the real event alone")
		}
	})

	t.Run("slow loris beyond the cap", func(t *testing.T) {
		h := startHarness(t, "", func(c *Config) { c.ReadTimeout, c.MaxConnsPerPeer = 2*time.Second, 16 })
		h.surface("sf", "s1", "api", "claude")
		line := string(h.line(evt{id: "slow", run: "r1", surface: "sf", kind: proto.KindStarted}))
		before := h.eventIDs()
		// All connect first, from this process: the real event is the
		// newest connection, so the oldest are dropped for it.
		conns := openIdle(h.sock, 100, func(err error) { t.Fatal(err) })
		var wg sync.WaitGroup
		answers := make(chan string, 100)
		for _, c := range conns {
			// Never a whole line: each either is dropped for a newer
			// connection or runs out of time.
			wg.Go(func() { answers <- dribble(t, c, line[:len(line)-1], 10*time.Millisecond) })
		}
		if got := h.post(evt{id: "real", run: "r1", surface: "sf", kind: proto.KindStarted}); got != okInserted {
			t.Fatalf("real event beside slow clients over the cap: %q", got)
		}
		wg.Wait()
		close(answers)
		dropped := 0
		for got := range answers {
			switch got {
			case "":
				dropped++
			case errResp(proto.ErrTimeout):
			default:
				t.Errorf("slow client answered %q", got)
			}
		}
		if dropped < 100-16 {
			t.Errorf("%d slow clients dropped, want at least %d", dropped, 100-16)
		}
		h.stored(before, "real@sf")
	})

	t.Run("a surface over its quota", func(t *testing.T) {
		h := startHarness(t, "", func(c *Config) {
			c.Quota = Quota{Events: 1, EventBurst: 3, Bytes: 1 << 20, ByteBurst: 1 << 20}
		})
		h.surface("sfA", "sA", "alpha", "claude")
		h.surface("sfB", "sB", "beta", "claude")
		for i := range 3 {
			h.mustPost(evt{id: fmt.Sprintf("a%d", i), run: "r1", surface: "sfA", kind: proto.KindRunning})
		}
		before, dump := h.eventIDs(), h.dump()
		for _, id := range []string{"a3", "a0"} { // a new event, and a retry
			if got := h.post(evt{id: id, run: "r1", surface: "sfA", kind: proto.KindFailed}); got != errResp(proto.ErrRateLimited) {
				t.Fatalf("event %s over the quota: %q, want %q", id, got, errResp(proto.ErrRateLimited))
			}
		}
		if h.dump() != dump {
			t.Error("a refused event changed stored state")
		}
		if st := h.e.SessionState("sA"); st.RunState != string(proto.StateRunning) {
			t.Errorf("run state after refused events: %s", st.RunState)
		}
		// Another surface has its own quota; a second later, one more fits.
		h.mustPost(evt{id: "b0", run: "r1", surface: "sfB", kind: proto.KindRunning})
		h.clock.Add(time.Second)
		h.mustPost(evt{id: "a3", run: "r1", surface: "sfA", kind: proto.KindRunning})
		if got := h.post(evt{id: "a4", run: "r1", surface: "sfA", kind: proto.KindRunning}); got != errResp(proto.ErrRateLimited) {
			t.Fatalf("second event after one second: %q", got)
		}
		h.stored(before, "b0@sfB", "a3@sfA")
	})

	t.Run("a sender the daemon places inside another pane", func(t *testing.T) {
		type ask struct {
			pid     int
			session string
		}
		var mu sync.Mutex
		var asked []ask
		var inEvil atomic.Bool // the sender runs in pane evil from now on
		h := startHarness(t, "", func(c *Config) {
			c.Quota = Quota{Events: 1, EventBurst: 2, Bytes: 1 << 20, ByteBurst: 1 << 20}
			c.Senders = senderRule(func(pid int, session string) error {
				mu.Lock()
				asked = append(asked, ask{pid, session})
				mu.Unlock()
				if inEvil.Load() && session == "sVictim" {
					return errors.New(`muster pane "evil": it may not send events for pane "victim"`)
				}
				return nil
			})
		})
		h.surface("sfVictim", "sVictim", "victim", "claude")
		h.surface("sfEvil", "sEvil", "evil", "claude")
		h.mustPost(evt{id: "v0", run: "r1", surface: "sfVictim", kind: proto.KindStarted, msg: "before"})
		before, dump := h.eventIDs(), h.dump()
		inEvil.Store(true)
		// The victim's own capability, as read from /proc/PID/environ.
		for _, id := range []string{"v1", "v0", "v2", "v3"} { // new, a reused id, and beyond the quota
			if got := h.post(evt{id: id, run: "r1", surface: "sfVictim", kind: proto.KindSucceeded}); got != errResp(proto.ErrForbidden) {
				t.Fatalf("event %s from inside another pane: %q, want %q", id, got, errResp(proto.ErrForbidden))
			}
		}
		if h.dump() != dump {
			t.Error("a refused event changed stored state")
		}
		if st := h.e.SessionState("sVictim"); st.RunState != string(proto.StateRunning) {
			t.Errorf("the victim's run state after refused events: %s", st.RunState)
		}
		// Refused events were not charged: the victim's quota still has its
		// second event; the sender's own pane is unaffected.
		h.mustPost(evt{id: "e0", run: "r1", surface: "sfEvil", kind: proto.KindStarted})
		h.stored(before, "e0@sfEvil")
		mu.Lock()
		defer mu.Unlock()
		for _, a := range asked {
			if a.pid != os.Getpid() {
				t.Errorf("MayRecord asked about pid %d, want the sender %d (SO_PEERCRED)", a.pid, os.Getpid())
			}
		}
		if len(asked) != 6 {
			t.Errorf("MayRecord was asked %d times, want once per authorized event (6)", len(asked))
		}
	})

	t.Run("a surface over its byte quota", func(t *testing.T) {
		h := startHarness(t, "", func(c *Config) {
			c.Quota = Quota{Events: 100, EventBurst: 100, Bytes: 1024, ByteBurst: 8 << 10}
		})
		h.surface("sf", "s1", "api", "claude")
		big := strings.Repeat("m", 5<<10)
		h.mustPost(evt{id: "big1", run: "r1", surface: "sf", kind: proto.KindRunning, msg: big})
		before, dump := h.eventIDs(), h.dump()
		if got := h.post(evt{id: "big2", run: "r1", surface: "sf", kind: proto.KindRunning, msg: big}); got != errResp(proto.ErrRateLimited) {
			t.Fatalf("second 5 KiB event within an 8 KiB budget: %q", got)
		}
		if h.dump() != dump {
			t.Error("a refused event changed stored state")
		}
		h.mustPost(evt{id: "small", run: "r1", surface: "sf", kind: proto.KindRunning})
		h.stored(before, "small@sf")
	})

	t.Run("another surface's event id", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sfA", "sA", "evil", "claude")
		h.surface("sfB", "sB", "victim", "claude")
		h.mustPost(evt{id: "b-start", run: "r1", surface: "sfB", kind: proto.KindStarted})
		before := h.eventIDs()
		// The evil pane sends the victim's next event id first.
		h.mustPost(evt{id: "predicted", run: "x", surface: "sfA", kind: proto.KindRunning})
		// The victim's real approval request is its own event.
		h.mustPost(evt{id: "predicted", run: "r1", surface: "sfB", kind: proto.KindApprovalRequested, msg: "approve?"})
		for _, s := range []string{"sfA", "sfB"} {
			if got := h.post(evt{id: "predicted", run: "r1", surface: s, kind: proto.KindSucceeded}); got != okDuplicate {
				t.Errorf("retry on %s: %q, want a duplicate", s, got)
			}
		}
		h.stored(before, "predicted@sfA", "predicted@sfB")
		if st := h.e.SessionState("sB"); st.RunState != string(proto.StateWaitingApproval) || st.Attention != 1 {
			t.Errorf("victim's state = %+v", st)
		}
		if st := h.e.SessionState("sA"); st.RunState != string(proto.StateRunning) || st.Attention != 0 || st.RunID != "x" {
			t.Errorf("evil pane's state = %+v", st)
		}
		items, _ := h.e.Attention(proto.AttentionArgs{})
		if len(items) != 1 || items[0].SessionID != "sB" || items[0].EventID != "predicted" {
			t.Errorf("attention = %+v", items)
		}
	})

	t.Run("a future-dated event, then a real approval request", func(t *testing.T) {
		h := startHarness(t, "")
		h.surface("sf", "s1", "api", "claude")
		now := h.clock.Now()
		h.mustPost(evt{id: "e1", run: "r1", surface: "sf", kind: proto.KindStarted, at: now.Add(-time.Second)})
		h.mustPost(evt{id: "pin", run: "r1", surface: "sf", kind: proto.KindRunning, at: now.Add(50 * time.Second)})
		before := h.eventIDs()
		h.clock.Add(time.Second)
		// Another run's approval, and the same run's, each open their item.
		h.mustPost(evt{id: "e2", run: "r2", surface: "sf", kind: proto.KindApprovalRequested, msg: "approve r2?"})
		st := h.e.SessionState("s1")
		if st.RunState != string(proto.StateWaitingApproval) || st.RunID != "r2" || st.Attention != 1 {
			t.Fatalf("after another run's approval: %+v", st)
		}
		h.clock.Add(time.Second)
		h.mustPost(evt{id: "e3", run: "r1", surface: "sf", kind: proto.KindApprovalRequested, msg: "approve r1?"})
		st = h.e.SessionState("s1")
		if st.RunState != string(proto.StateWaitingApproval) || st.RunID != "r1" || st.Attention != 1 {
			t.Fatalf("after the pinned run's own approval: %+v", st)
		}
		items, _ := h.e.Attention(proto.AttentionArgs{All: true})
		if len(items) != 2 || items[0].EventID != "e2" || items[1].EventID != "e3" || !items[1].Open {
			t.Fatalf("attention = %+v", items)
		}
		h.stored(before, "e2@sf", "e3@sf")
		// The client's date is kept as evidence; the run is dated by receipt.
		x, err := h.e.Explain(t.Context(), "api")
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range x.Events {
			if ev.EventID == "pin" && ev.OccurredAt != formatTime(now.Add(50*time.Second)) {
				t.Errorf("pin's evidence dated %s", ev.OccurredAt)
			}
		}
		if *x.RunStartedAt != formatTime(now.Add(-time.Second)) {
			t.Errorf("run started at %s", *x.RunStartedAt)
		}
	})
}

// senderRule is a SenderGate written as a function.
type senderRule func(pid int, sessionID string) error

func (r senderRule) MayRecord(pid int, sessionID string) error { return r(pid, sessionID) }
