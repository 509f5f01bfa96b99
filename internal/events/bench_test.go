package events

import (
	"bufio"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/musterhq/muster/internal/proto"
)

// echoServer is the floor the engine is measured against: a bare Unix
// socket server that reads one JSON line per connection, writes it back,
// and closes, i.e. the same protocol shape with no decoding, no
// authorization and no storage.
func echoServer(tb testing.TB) string {
	sock := filepath.Join(shortDir(tb), "echo.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, err := bufio.NewReaderSize(c, 4096).ReadSlice('\n')
				if err == nil {
					c.Write(line)
				}
			}()
		}
	})
	tb.Cleanup(func() { ln.Close(); wg.Wait() })
	return sock
}

// roundTrip dials, sends one line, reads the whole answer, and closes.
func roundTrip(tb testing.TB, sock string, line []byte) time.Duration {
	d, err := roundTripErr(sock, line)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func roundTripErr(sock string, line []byte) (time.Duration, error) {
	start := time.Now()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return 0, err
	}
	if _, err := c.Write(line); err != nil {
		c.Close()
		return 0, err
	}
	var buf [1024]byte
	n := 0
	for {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil || n == len(buf) || (n > 0 && buf[n-1] == '\n') {
			break
		}
	}
	c.Close()
	d := time.Since(start)
	if n == 0 || buf[n-1] != '\n' {
		return 0, fmt.Errorf("no answer: %q", buf[:n])
	}
	return d, nil
}

// benchEvents makes event lines: runs of five lifecycle events spread over
// surfaces, each with a fresh random UUID as id, as the hook helper's are.
type benchEvents struct {
	h   *harness
	seq atomic.Int64
}

var benchKinds = []proto.EventKind{proto.KindStarted, proto.KindRunning, proto.KindApprovalRequested, proto.KindRunning, proto.KindSucceeded}

func (g *benchEvents) next() []byte {
	i := g.seq.Add(1)
	surface := fmt.Sprintf("sf%d", i%16)
	return g.h.line(evt{id: uuid.NewString(), run: fmt.Sprintf("run-%d", i/80), surface: surface,
		kind: benchKinds[(i/16)%5], hook: "PostToolUse", at: g.h.clock.Now()})
}

func benchHarness(b *testing.B) *benchEvents {
	h := startHarness(b, "", func(c *Config) { c.Quota = Quota{Off: true} })
	for i := range 16 {
		h.surface(fmt.Sprintf("sf%d", i), fmt.Sprintf("s%d", i), fmt.Sprintf("n%d", i), "claude")
	}
	return &benchEvents{h: h}
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkAckLatency sends events one at a time, one connection each,
// alternating with the echo floor so that drift hits both equally.
func BenchmarkAckLatency(b *testing.B) {
	g := benchHarness(b)
	echo := echoServer(b)
	var floor, ours []time.Duration
	for b.Loop() {
		line := g.next()
		floor = append(floor, roundTrip(b, echo, line))
		ours = append(ours, roundTrip(b, g.h.sock, line))
	}
	f50, f99 := percentile(floor, .50), percentile(floor, .99)
	o50, o99 := percentile(ours, .50), percentile(ours, .99)
	b.ReportMetric(float64(o50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(o99.Microseconds()), "p99-µs")
	b.ReportMetric(float64(f50.Microseconds()), "floor-p50-µs")
	b.ReportMetric(float64(o50)/float64(f50), "p50-x-floor")
	b.ReportMetric(float64(o99)/float64(f99), "p99-x-floor")
}

// BenchmarkThroughput sends bursts from parallel clients, one connection
// per event, and reports durable events per second beside the echo floor.
func BenchmarkThroughput(b *testing.B) {
	g := benchHarness(b)
	echo := echoServer(b)
	const clients, perBurst = 16, 4000
	burst := func(sock string) time.Duration {
		lines := make([][]byte, perBurst)
		for i := range lines {
			lines[i] = g.next()
		}
		var next atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= perBurst {
						return
					}
					if _, err := roundTripErr(sock, lines[i]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	var floor, ours time.Duration
	n := 0
	for b.Loop() {
		floor += burst(echo)
		ours += burst(g.h.sock)
		n += perBurst
	}
	st := g.h.e.Stats()
	b.ReportMetric(float64(st.Events)/float64(max(st.Batches, 1)), "events/commit")
	b.ReportMetric(float64(n)/ours.Seconds(), "events/s")
	b.ReportMetric(float64(n)/floor.Seconds(), "floor-req/s")
	b.ReportMetric(ours.Seconds()/floor.Seconds(), "x-floor-time")
}
