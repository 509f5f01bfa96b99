// Command eventsbench measures events.sock of a real `muster daemon`
// against a bare Unix-socket JSON echo server in another process, in one
// run (issue 3): event ack latency p50/p99 with one connection per event,
// and sustained events/s from parallel clients, one connection per event.
// Every event is durably committed by the daemon before it answers.
//
// The daemon runs under a temporary MUSTER_HOME with a few `--cmd` panes
// that write their environment to a file, which is where the benchmark
// reads each pane's surface id and capability. The events cycle through
// started, running, running, succeeded in runs of short duration, so no
// attention item (and no notification command) is involved.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/musterhq/muster/internal/proto"
)

var (
	muster   = flag.String("muster", "muster", "muster binary")
	seqN     = flag.Int("n", 5000, "sequential events for the latency test (each also sent to the floor)")
	burst    = flag.Int("burst", 20000, "events per throughput burst")
	bursts   = flag.Int("bursts", 3, "throughput bursts (each also run against the floor)")
	clients  = flag.Int("clients", 16, "parallel clients in the throughput test")
	sessions = flag.Int("sessions", 8, "panes sending events")
)

type pane struct{ sock, surface, capability string }

func main() {
	if len(os.Args) == 3 && os.Args[1] == "echo-server" {
		echoServer(os.Args[2])
		return
	}
	flag.Parse()
	home, err := os.MkdirTemp("/tmp", "meb")
	check(err)
	defer os.RemoveAll(home)
	os.Setenv("MUSTER_HOME", home)
	for _, k := range []string{"TMUX", "TMUX_PANE", "MUSTER_EVENT_SOCKET", "MUSTER_SURFACE_ID", "MUSTER_EVENT_CAPABILITY"} {
		os.Unsetenv(k)
	}

	daemon := exec.Command(*muster, "daemon", "--foreground", "--quiet")
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	check(daemon.Start())
	defer func() {
		exec.Command(*muster, "daemon", "stop").Run()
		daemon.Process.Kill()
		daemon.Wait()
	}()
	waitFor(filepath.Join(home, "run", "control.sock"))

	script := filepath.Join(home, "pane.sh")
	check(os.WriteFile(script, []byte("#!/bin/sh\nenv > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"\nexec sleep 100000\n"), 0o755))
	var panes []pane
	for i := range *sessions {
		envFile := filepath.Join(home, fmt.Sprintf("env-%d", i))
		out, err := exec.Command(*muster, "new", "--detach", "--name", fmt.Sprintf("bench%d", i),
			"--cmd", script+" "+envFile).CombinedOutput()
		if err != nil {
			fail("muster new: %v: %s", err, out)
		}
		waitFor(envFile)
		b, err := os.ReadFile(envFile)
		check(err)
		var p pane
		for _, l := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(l, "=")
			switch k {
			case "MUSTER_EVENT_SOCKET":
				p.sock = v
			case "MUSTER_SURFACE_ID":
				p.surface = v
			case "MUSTER_EVENT_CAPABILITY":
				p.capability = v
			}
		}
		if p.sock == "" || p.surface == "" || p.capability == "" {
			fail("pane %d has no event environment", i)
		}
		panes = append(panes, p)
	}

	echoSock := filepath.Join(home, "echo.sock")
	self, err := os.Executable()
	check(err)
	echo := exec.Command(self, "echo-server", echoSock)
	check(echo.Start())
	defer func() { echo.Process.Kill(); echo.Wait() }()
	waitFor(echoSock)

	gen := &generator{panes: panes}
	fmt.Printf("%d CPUs, load %s; %d panes; events.sock %s\n", runtimeCPUs(), loadavg(), len(panes), panes[0].sock)

	// Latency: one event at a time, alternating with the floor.
	for range 200 { // warm-up
		line := gen.next()
		roundTrip(echoSock, line)
		roundTrip(panes[0].sock, line)
	}
	var floor, ours []time.Duration
	for range *seqN {
		line := gen.next()
		floor = append(floor, roundTrip(echoSock, line))
		ours = append(ours, roundTrip(panes[0].sock, line))
	}
	f50, f99, o50, o99 := pct(floor, .5), pct(floor, .99), pct(ours, .5), pct(ours, .99)
	fmt.Printf("\nack latency, one connection per event, %d events:\n", *seqN)
	fmt.Printf("  echo floor     p50 %7.1f µs   p99 %7.1f µs\n", us(f50), us(f99))
	fmt.Printf("  muster daemon  p50 %7.1f µs   p99 %7.1f µs\n", us(o50), us(o99))
	fmt.Printf("  p50 = %.2fx floor (target <= 3), p99 = %.2fx floor, p99 %.3f ms (target <= 1 ms)\n",
		float64(o50)/float64(f50), float64(o99)/float64(f99), float64(o99)/1e6)

	// Throughput: parallel clients, one connection per event.
	var fT, oT, fCPU, oCPU time.Duration
	n := 0
	for range *bursts {
		c0 := cpuTime(echo.Process.Pid)
		fT += runBurst(echoSock, gen)
		c1 := cpuTime(echo.Process.Pid)
		fCPU += c1 - c0
		c0 = cpuTime(daemon.Process.Pid)
		oT += runBurst("", gen)
		c1 = cpuTime(daemon.Process.Pid)
		oCPU += c1 - c0
		n += *burst
	}
	fmt.Printf("\nthroughput, %d clients, one connection per event, %d events:\n", *clients, n)
	fmt.Printf("  echo floor     %9.0f requests/s\n", float64(n)/fT.Seconds())
	fmt.Printf("  muster daemon  %9.0f durable events/s (target >= 20000) = %.2fx floor\n", float64(n)/oT.Seconds(), fT.Seconds()/oT.Seconds())
	fmt.Printf("  server CPU per request: echo %.1f µs, daemon %.1f µs (%.2fx); a busy machine inflates these less than wall time\n",
		us(fCPU)/float64(n), us(oCPU)/float64(n), float64(oCPU)/float64(max(fCPU, 1)))
	fmt.Printf("  rejected or failed: %d\n", gen.bad.Load())
	if gen.bad.Load() > 0 {
		os.Exit(1)
	}

	// The daemon saw them: every pane's run state is known.
	out, err := exec.Command(*muster, "ls", "--json").Output()
	check(err)
	var rows []proto.SessionInfo
	check(json.Unmarshal(out, &rows))
	for _, r := range rows {
		if r.RunState == nil {
			fail("session %s has no run state after the benchmark", r.Name)
		}
	}
	fmt.Printf("  muster ls: %d sessions, all with a run state\n", len(rows))
}

type generator struct {
	panes []pane
	seq   atomic.Int64
	bad   atomic.Int64
}

var kinds = []proto.EventKind{proto.KindStarted, proto.KindRunning, proto.KindRunning, proto.KindSucceeded}

// next makes one event line: runs of four events per pane, fresh ids.
func (g *generator) next() []byte {
	i := g.seq.Add(1)
	p := g.panes[int(i)%len(g.panes)]
	turn := i / int64(len(g.panes))
	env := proto.Envelope{SchemaVersion: 1, Capability: p.capability, Event: proto.Event{
		SchemaVersion: 1, ID: proto.RawID{RawValue: uuid.NewString()}, // random, as the hook helper's are
		RunID:     proto.RawID{RawValue: fmt.Sprintf("run-%s-%d", p.surface, turn/4)},
		SurfaceID: proto.RawID{RawValue: p.surface}, Provider: "claude", Kind: kinds[turn%4],
		OccurredAt: time.Now().UTC(), HookName: "PostToolUse",
	}}
	b, _ := json.Marshal(env)
	return append(b, '\n')
}

func runBurst(sock string, g *generator) time.Duration {
	lines := make([][]byte, *burst)
	for i := range lines {
		lines[i] = g.next()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range *clients {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(lines)) {
					return
				}
				s := sock
				if s == "" {
					s = g.panes[0].sock
				}
				resp, err := send(s, lines[i])
				if err != nil || (sock == "" && resp != `{"ok":true,"inserted":true}`+"\n") {
					g.bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

func roundTrip(sock string, line []byte) time.Duration {
	start := time.Now()
	if _, err := send(sock, line); err != nil {
		fail("%v", err)
	}
	return time.Since(start)
}

func send(sock string, line []byte) (string, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := c.Write(line); err != nil {
		return "", err
	}
	var buf [1024]byte
	n := 0
	for n < len(buf) {
		m, err := c.Read(buf[n:])
		n += m
		if n > 0 && buf[n-1] == '\n' {
			break
		}
		if err != nil {
			return string(buf[:n]), err
		}
	}
	return string(buf[:n]), nil
}

// echoServer is the floor: read one line per connection, write it back.
func echoServer(sock string) {
	ln, err := net.Listen("unix", sock)
	check(err)
	for {
		c, err := ln.Accept()
		if err != nil {
			continue
		}
		go func() {
			defer c.Close()
			line, err := bufio.NewReaderSize(c, 4096).ReadSlice('\n')
			if err == nil {
				c.Write(line)
			}
		}()
	}
}

// cpuTime is a process's user + system time (Linux /proc; 0 elsewhere).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return time.Duration(ut+st) * (time.Second / 100) // USER_HZ
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

func waitFor(path string) {
	for range 400 {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	fail("%s did not appear", path)
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func runtimeCPUs() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return max(1, strings.Count(string(b), "processor\t:"))
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "eventsbench: "+format+"\n", args...)
	os.Exit(1)
}
