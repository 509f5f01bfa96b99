// Command eventsbench measures events.sock of a real `muster daemon`
// against a bare Unix-socket JSON echo server in another process, in one
// run (issue 3): event ack latency p50/p99 with one connection per event,
// and sustained events/s from parallel clients, one connection per event.
// Every event is durably committed by the daemon before it answers.
//
// With -baseline, a second daemon (another muster binary, typically the
// commit before a change) runs beside the first, and every measurement
// alternates between the two (and the echo floor) event by event, burst by
// burst, so that a busy machine slows both alike: the ratios are the
// result, the absolute figures are the machine's.
//
// With -idle N (default 5000), a separate process then holds N idle
// connections open on each daemon's events.sock while this one sends
// events the way the hook helper does (internal/hookevent.Send: one
// connection, a 1 s timeout, one retry after 50 ms), and reports their ack
// latency and how many were acknowledged.
//
// Each daemon runs under a temporary MUSTER_HOME with a few `--cmd` panes
// that write their environment to a file, which is where the benchmark
// reads each pane's surface id and capability. The events cycle through
// started, running, running, succeeded in runs of short duration, so no
// attention item (and no notification command) is involved. The daemons
// run with MUSTER_EVENT_QUOTA=off (-quota): the throughput test sends far
// more per pane than the per-surface quota allows a real agent.
//
// With -cpuprofile PREFIX, each daemon writes its CPU profile to
// PREFIX.baseline and PREFIX.muster (go tool pprof BINARY FILE).
//
// Every process it starts (daemons and their panes, the echo server, the
// idle clients) is stopped on every way out: the end, an error, a signal.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/musterhq/muster/internal/hookevent"
	"github.com/musterhq/muster/internal/proto"
)

var (
	muster    = flag.String("muster", "muster", "muster binary")
	baseline  = flag.String("baseline", "", "a second muster binary measured in the same run, alternating with -muster")
	seqN      = flag.Int("n", 5000, "sequential events for the latency test (each also sent to the floor)")
	burst     = flag.Int("burst", 20000, "events per throughput burst")
	bursts    = flag.Int("bursts", 3, "throughput bursts per daemon (each also run against the floor)")
	clients   = flag.Int("clients", 16, "parallel clients in the throughput test")
	sessions  = flag.Int("sessions", 8, "panes sending events")
	idleN     = flag.Int("idle", 5000, "idle connections held open by another process during the hook test (0: skip it)")
	idleHooks = flag.Int("idle-hooks", 300, "events sent as the hook helper does while the idle connections are open")
	quota     = flag.String("quota", "off", "MUSTER_EVENT_QUOTA for the daemons")
	cpuprof   = flag.String("cpuprofile", "", "write each daemon's CPU profile to this prefix + .NAME (MUSTER_CPUPROFILE)")
)

type pane struct{ sock, surface, capability string }

// daemon is one muster daemon under test.
type daemon struct {
	name  string
	bin   string
	home  string
	env   []string
	cmd   *exec.Cmd
	panes []pane
	gen   *generator
	sock  string // events.sock
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "echo-server" {
		echoServer(os.Args[2])
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "idle-clients" {
		idleClients(os.Args[2], os.Args[3])
		return
	}
	flag.Parse()
	reapOnSignal()
	for _, k := range []string{"TMUX", "TMUX_PANE", "MUSTER_EVENT_SOCKET", "MUSTER_SURFACE_ID", "MUSTER_EVENT_CAPABILITY", "MUSTER_HOME"} {
		os.Unsetenv(k)
	}
	var ds []*daemon
	if *baseline != "" {
		ds = append(ds, startDaemon("baseline", *baseline))
	}
	ds = append(ds, startDaemon("muster", *muster))

	tmp, err := os.MkdirTemp("/tmp", "meb")
	check(err)
	atExit(func() { os.RemoveAll(tmp) })
	echoSock := filepath.Join(tmp, "echo.sock")
	self, err := os.Executable()
	check(err)
	echo := exec.Command(self, "echo-server", echoSock)
	startChild(echo)
	waitFor(echoSock)

	fmt.Printf("%d CPUs, load %s; %d panes per daemon\n", runtimeCPUs(), loadavg(), *sessions)
	for _, d := range ds {
		fmt.Printf("  %-8s %s\n", d.name, d.bin)
	}

	// Latency: one event at a time, alternating between the floor and
	// the daemons, in a rotating order.
	targets := len(ds) + 1
	send1 := func(t int) time.Duration {
		if t == 0 {
			return roundTrip(echoSock, ds[0].gen.next())
		}
		d := ds[t-1]
		return roundTrip(d.sock, d.gen.next())
	}
	for i := range 200 { // warm-up
		for j := range targets {
			send1((i + j) % targets)
		}
	}
	lat := make([][]time.Duration, targets)
	for i := range *seqN {
		for j := range targets {
			t := (i + j) % targets
			lat[t] = append(lat[t], send1(t))
		}
	}
	fmt.Printf("\nack latency, one connection per event, %d events each:\n", *seqN)
	f50, f99 := pct(lat[0], .5), pct(lat[0], .99)
	fmt.Printf("  %-8s p50 %7.1f µs   p99 %7.1f µs\n", "echo", us(f50), us(f99))
	for i, d := range ds {
		o50, o99 := pct(lat[i+1], .5), pct(lat[i+1], .99)
		fmt.Printf("  %-8s p50 %7.1f µs   p99 %7.1f µs   p50 = %.2fx floor, p99 = %.2fx floor\n",
			d.name, us(o50), us(o99), float64(o50)/float64(f50), float64(o99)/float64(f99))
	}
	if len(ds) == 2 {
		fmt.Printf("  muster/baseline: p50 %.3f, p99 %.3f\n",
			float64(pct(lat[2], .5))/float64(pct(lat[1], .5)), float64(pct(lat[2], .99))/float64(pct(lat[1], .99)))
	}

	// Throughput: parallel clients, one connection per event; bursts
	// alternate between the floor and the daemons.
	wall := make([]time.Duration, targets)
	cpu := make([]time.Duration, targets)
	sysr := make([]int64, targets)
	sysw := make([]int64, targets)
	// The clients' own CPU: with the server's, how busy the machine was,
	// which tells a server short of processors from one that stalls.
	clientCPU := make([]time.Duration, targets)
	for r := range *bursts {
		for j := range targets {
			t := (r + j) % targets
			if t == 0 {
				c0, s0 := cpuTime(echo.Process.Pid), selfCPU()
				wall[0] += runBurst(echoSock, ds[0].gen, false)
				cpu[0] += cpuTime(echo.Process.Pid) - c0
				clientCPU[0] += selfCPU() - s0
				continue
			}
			d := ds[t-1]
			c0 := cpuTime(d.cmd.Process.Pid)
			r0, w0 := syscalls(d.cmd.Process.Pid)
			s0 := selfCPU()
			wall[t] += runBurst(d.sock, d.gen, true)
			cpu[t] += cpuTime(d.cmd.Process.Pid) - c0
			clientCPU[t] += selfCPU() - s0
			r1, w1 := syscalls(d.cmd.Process.Pid)
			sysr[t] += r1 - r0
			sysw[t] += w1 - w0
		}
	}
	n := *burst * *bursts
	fmt.Printf("\nthroughput, %d clients, one connection per event, %d events each:\n", *clients, n)
	busy := func(t int) float64 { return (cpu[t] + clientCPU[t]).Seconds() / wall[t].Seconds() }
	fmt.Printf("  %-8s %9.0f requests/s, server CPU %.1f µs per request (clients %.1f µs; %.2f CPUs busy)\n", "echo",
		float64(n)/wall[0].Seconds(), us(cpu[0])/float64(n), us(clientCPU[0])/float64(n), busy(0))
	for i, d := range ds {
		fmt.Printf("  %-8s %9.0f durable events/s = %.2fx floor, server CPU %.1f µs and %.1f read + %.1f write syscalls per request (clients %.1f µs; %.2f CPUs busy)\n",
			d.name, float64(n)/wall[i+1].Seconds(), wall[0].Seconds()/wall[i+1].Seconds(), us(cpu[i+1])/float64(n),
			float64(sysr[i+1])/float64(n), float64(sysw[i+1])/float64(n), us(clientCPU[i+1])/float64(n), busy(i+1))
	}
	if len(ds) == 2 {
		fmt.Printf("  muster/baseline: events/s %.3f, CPU per request %.3f\n",
			wall[1].Seconds()/wall[2].Seconds(), float64(cpu[2])/float64(max(cpu[1], 1)))
	}
	bad := false
	for _, d := range ds {
		if k := d.gen.bad.Load(); k > 0 {
			fmt.Printf("  %s: %d rejected or failed\n", d.name, k)
			bad = true
		}
		d.checkLs()
	}

	if *idleN > 0 {
		fmt.Printf("\nhook events while another process holds %d idle connections (hook helper: 1 s timeout, one retry):\n", *idleN)
		for _, d := range ds {
			d.idleTest(self)
		}
	}
	if bad {
		exit(1)
	}
	exit(0)
}

func startDaemon(name, bin string) *daemon {
	home, err := os.MkdirTemp("/tmp", "meb")
	check(err)
	d := &daemon{name: name, bin: bin, home: home}
	d.env = append(os.Environ(), "MUSTER_HOME="+home, "MUSTER_EVENT_QUOTA="+*quota)
	if *cpuprof != "" {
		d.env = append(d.env, "MUSTER_CPUPROFILE="+*cpuprof+"."+name)
	}
	d.cmd = exec.Command(bin, "daemon", "--foreground", "--quiet")
	d.cmd.Env = d.env
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		os.RemoveAll(home)
		fail("%s: %v", name, err)
	}
	atExit(d.stop)
	waitFor(filepath.Join(home, "run", "control.sock"))

	script := filepath.Join(home, "pane.sh")
	check(os.WriteFile(script, []byte("#!/bin/sh\nenv > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"\nexec sleep 100000\n"), 0o755))
	for i := range *sessions {
		envFile := filepath.Join(home, fmt.Sprintf("env-%d", i))
		out, err := d.muster("new", "--detach", "--name", fmt.Sprintf("bench%d", i), "--cmd", script+" "+envFile)
		if err != nil {
			fail("%s: muster new: %v: %s", name, err, out)
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
			fail("%s: pane %d has no event environment", name, i)
		}
		d.panes = append(d.panes, p)
	}
	d.sock = d.panes[0].sock
	d.gen = &generator{panes: d.panes}
	return d
}

func (d *daemon) muster(args ...string) ([]byte, error) {
	c := exec.Command(d.bin, args...)
	c.Env = d.env
	return c.CombinedOutput()
}

// stop stops the daemon and its panes the orderly way, so that its CPU
// profile is written; a daemon that does not exit within daemonExitWait
// is killed with its process group (a pane is its own session, and dies
// of the hangup when the daemon's end of its terminal closes).
func (d *daemon) stop() {
	d.muster("daemon", "stop", "--force")
	exited := make(chan struct{})
	go func() { d.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(daemonExitWait):
		syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	os.RemoveAll(d.home)
}

const daemonExitWait = 10 * time.Second

// checkLs: the daemon saw the events; every pane's run state is known.
func (d *daemon) checkLs() {
	c := exec.Command(d.bin, "ls", "--json")
	c.Env = d.env
	out, err := c.Output()
	check(err)
	var rows []proto.SessionInfo
	check(json.Unmarshal(out, &rows))
	for _, r := range rows {
		if r.RunState == nil {
			fail("%s: session %s has no run state after the benchmark", d.name, r.Name)
		}
	}
}

// idleTest opens the idle connections from another process, then sends
// events as the hook helper does and reports what happened to them.
func (d *daemon) idleTest(self string) {
	cmd := exec.Command(self, "idle-clients", d.sock, strconv.Itoa(*idleN))
	stdin, err := cmd.StdinPipe()
	check(err)
	stdout, err := cmd.StdoutPipe()
	check(err)
	cmd.Stderr = os.Stderr
	defer startChild(cmd)()
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		fail("%s: idle clients did not start", d.name)
	}
	opened := sc.Text()
	var lat []time.Duration
	acked := 0
	errs := map[string]int{}
	for range *idleHooks {
		env := d.gen.envelope()
		start := time.Now()
		resp, err := hookevent.Send(d.sock, env, time.Second)
		el := time.Since(start)
		switch {
		case err != nil:
			errs[errClass(err)]++
		case !resp.OK:
			errs[resp.Error]++
		default:
			acked++
			lat = append(lat, el)
		}
	}
	fmt.Fprintln(stdin, "count")
	still := ""
	if sc.Scan() {
		still = sc.Text()
	}
	fmt.Printf("  %-8s idle connections: %s, %s at the end\n", d.name, opened, still)
	if len(lat) > 0 {
		fmt.Printf("  %-8s acked %d of %d   p50 %7.1f µs   p99 %7.1f µs", d.name, acked, *idleHooks, us(pct(lat, .5)), us(pct(lat, .99)))
	} else {
		fmt.Printf("  %-8s acked 0 of %d", d.name, *idleHooks)
	}
	if len(errs) > 0 {
		fmt.Printf("   failures: %v", errs)
	}
	fmt.Println()
}

func errClass(err error) string {
	s := err.Error()
	for _, k := range []string{"resource temporarily unavailable", "connection refused", "timeout", "i/o timeout", "EOF", "reset"} {
		if strings.Contains(s, k) {
			return k
		}
	}
	return s
}

// idleClients opens n connections to sock and holds them without sending,
// as a hostile local process would. It prints how many it opened; on a
// line from stdin it prints how many the server still holds open, then
// exits.
func idleClients(sock, count string) {
	n, _ := strconv.Atoi(count)
	var conns []*net.UnixConn
	failed := 0
	for range n {
		c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
		if err != nil {
			failed++
			continue
		}
		conns = append(conns, c)
	}
	fmt.Printf("%d opened, %d refused\n", len(conns), failed)
	bufio.NewReader(os.Stdin).ReadString('\n')
	open := 0
	var b [1]byte
	for _, c := range conns {
		// A peek that would block: neither answered nor closed.
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
	fmt.Printf("%d still open\n", open)
}

type generator struct {
	panes []pane
	seq   atomic.Int64
	bad   atomic.Int64
}

var kinds = []proto.EventKind{proto.KindStarted, proto.KindRunning, proto.KindRunning, proto.KindSucceeded}

// envelope makes one event: runs of four events per pane, fresh ids.
func (g *generator) envelope() proto.Envelope {
	i := g.seq.Add(1)
	p := g.panes[int(i)%len(g.panes)]
	turn := i / int64(len(g.panes))
	return proto.Envelope{SchemaVersion: 1, Capability: p.capability, Event: proto.Event{
		SchemaVersion: 1, ID: proto.RawID{RawValue: uuid.NewString()}, // random, as the hook helper's are
		RunID:     proto.RawID{RawValue: fmt.Sprintf("run-%s-%d", p.surface, turn/4)},
		SurfaceID: proto.RawID{RawValue: p.surface}, Provider: "claude", Kind: kinds[turn%4],
		OccurredAt: time.Now().UTC(), HookName: "PostToolUse",
	}}
}

func (g *generator) next() []byte {
	b, _ := json.Marshal(g.envelope())
	return append(b, '\n')
}

// runBurst sends one burst to sock; daemon says the answers must be
// inserted:true.
func runBurst(sock string, g *generator, daemon bool) time.Duration {
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
				resp, err := send(sock, lines[i])
				if err != nil || (daemon && resp != `{"ok":true,"inserted":true}`+"\n") {
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
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
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

// selfCPU is this process's user + system time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// syscalls is a process's read and write system calls so far (Linux
// /proc/PID/io: read, pread, recv, write, pwrite, send and the like).
func syscalls(pid int) (r, w int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "syscr":
			r = n
		case "syscw":
			w = n
		}
	}
	return r, w
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
	exit(1)
}

// Every process the benchmark starts is registered with atExit, and every
// way out (the end of main, fail, a signal) goes through exit, which
// stops them: os.Exit runs no deferred call, so a defer alone would leak
// daemons, their panes and the helper processes on an error.
var (
	reapMu  sync.Mutex
	reapers []func()
	reaped  bool
	reapAll sync.Once
)

// atExit registers f to run on exit, after those registered later.
func atExit(f func()) {
	reapMu.Lock()
	if !reaped {
		reapers = append(reapers, f)
		reapMu.Unlock()
		return
	}
	reapMu.Unlock()
	f() // exiting already: nobody would run it
}

// reap runs the registered cleanups once, newest first; a concurrent
// caller waits until they have run.
func reap() {
	reapAll.Do(func() {
		reapMu.Lock()
		fs := reapers
		reapers, reaped = nil, true
		reapMu.Unlock()
		for _, f := range slices.Backward(fs) {
			f()
		}
	})
}

func exit(code int) {
	reap()
	os.Exit(code)
}

// startChild starts a helper process and registers it to be killed; the
// returned stop kills it earlier (once, whoever calls first).
func startChild(c *exec.Cmd) (stop func()) {
	check(c.Start())
	stop = sync.OnceFunc(func() { c.Process.Kill(); c.Wait() })
	atExit(stop)
	return stop
}

// reapOnSignal makes an interrupt or termination exit through exit.
func reapOnSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "eventsbench: %v\n", s)
		exit(130)
	}()
}
