// Command corebench measures Muster's pane output path against a raw PTY,
// tmux and a minimal Go relay (relay.go) in one run on one machine, and
// prints the ratios (issues 2 and 11):
// throughput with one attached client, keystroke-to-echo latency through
// `muster attach` and `tmux attach`, RSS per pane with 10,000 full-width
// lines of scrollback beside tmux's on the same input, and daemon CPU with
// 50 idle panes. -phases picks some of them.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"

	"github.com/musterhq/muster/internal/proto"
)

var (
	muster   = flag.String("muster", "muster", "muster binary")
	sizeMB   = flag.Int("mb", 200, "throughput payload in MB")
	keys     = flag.Int("keys", 300, "keystrokes for the latency test")
	idleSecs = flag.Int("idle", 60, "seconds to measure idle CPU")
	panes    = flag.Int("panes", 50, "idle panes")
	rssPanes = flag.Int("rss-panes", 10, "panes for the RSS test")
	rounds   = flag.Int("rounds", 3, "alternating rounds of the throughput test")
	escKeys  = flag.Int("esc", 200, "lone Esc presses timed per kind (phase esc)")
	kindsF   = flag.String("kinds", "muster,tmux,relay,direct,epoll,cepoll", "which kinds the latency test times (cepoll: when a C compiler is there)")
	phases   = flag.String("phases", "throughput,latency,esc,rss,idle", "which measurements to run (socket: throughput's raw PTY and socket clients only)")
)

func phase(name string) bool { return strings.Contains(","+*phases+",", ","+name+",") }

func main() {
	if relayMain(os.Args[1:]) {
		return
	}
	flag.Parse()
	home, _ := os.MkdirTemp("/tmp", "mb")
	defer os.RemoveAll(home)
	os.Setenv("MUSTER_HOME", home)
	os.Setenv("TMUX", "")
	defer exec.Command(*muster, "daemon", "stop", "--force").Run()
	defer exec.Command("tmux", "-L", "musterbench", "kill-server").Run()

	if phase("socket") || phase("throughput") {
		payload := filepath.Join(home, "payload")
		makePayload(payload, *sizeMB<<20)
		// Each kind is timed once per round, in turns, and the median
		// round counts: one run each moved with the load of a shared
		// machine (raw PTY alone from 58 to 87 MB/s in three runs).
		kinds := []string{"raw", "muster socket", "relay socket"}
		if phase("throughput") {
			kinds = append(kinds, "muster attach", "tmux attach", "relay attach")
		}
		times := map[string][]time.Duration{}
		for r := 0; r < *rounds; r++ {
			for _, k := range kinds {
				var d time.Duration
				switch k {
				case "raw":
					d = timeRawPTY(payload)
				case "muster socket":
					d = timeMusterSocket(payload)
				case "relay socket":
					d = timeRelaySocket(payload)
				default:
					d = timeAttachPTY(payload, strings.Fields(k)[0])
				}
				times[k] = append(times[k], d)
			}
		}
		med := map[string]float64{}
		for _, k := range kinds {
			med[k] = percentile(times[k], 50).Seconds()
		}
		mb := float64(*sizeMB)
		fmt.Printf("throughput %d MB of coloured lines, one attached client, median of %d alternating rounds:\n", *sizeMB, *rounds)
		fmt.Printf("  raw PTY                      %7.1f MB/s\n", mb/med["raw"])
		fmt.Printf("  muster (socket client)       %7.1f MB/s  = %.2fx raw PTY (target >= 0.8)\n", mb/med["muster socket"], med["raw"]/med["muster socket"])
		fmt.Printf("  minimal Go relay (socket)    %7.1f MB/s  = %.2fx raw PTY\n", mb/med["relay socket"], med["raw"]/med["relay socket"])
		fmt.Printf("  muster/relay (socket)        %7.2fx\n", med["relay socket"]/med["muster socket"])
		if phase("throughput") {
			fmt.Printf("  muster attach (in a PTY)     %7.1f MB/s\n", mb/med["muster attach"])
			fmt.Printf("  tmux attach (in a PTY)       %7.1f MB/s\n", mb/med["tmux attach"])
			fmt.Printf("  relay client (in a PTY)      %7.1f MB/s\n", mb/med["relay attach"])
			fmt.Printf("  muster attach / tmux attach  %7.2fx (target >= 1.5)\n", med["tmux attach"]/med["muster attach"])
			fmt.Printf("  muster attach / relay client %7.2fx\n", med["relay attach"]/med["muster attach"])
		}
	}
	if phase("latency") {
		// The kinds take turns, a round of keys each, so that a change of
		// load on a shared machine falls on all of them alike.
		var kinds []string
		for _, k := range strings.Split(*kindsF, ",") {
			if k != "cepoll" || cepollBin() != "" {
				kinds = append(kinds, k)
			}
		}
		lat := map[string][]time.Duration{}
		const rounds = 5
		for r := 0; r < rounds; r++ {
			for _, k := range kinds {
				lat[k] = append(lat[k], echoLatency(k, max(*keys/rounds, 1))...)
			}
		}
		p := map[string][2]time.Duration{}
		for _, k := range kinds {
			p[k] = [2]time.Duration{percentile(lat[k], 50), percentile(lat[k], 99)}
		}
		ratio := func(a, b string) string {
			if p[a][0] == 0 || p[b][0] == 0 {
				return "not measured"
			}
			return fmt.Sprintf("p50 %.2fx p99 %.2fx", float64(p[a][0])/float64(p[b][0]), float64(p[a][1])/float64(p[b][1]))
		}
		fmt.Printf("keystroke-to-echo latency over %d keys each, in %d alternating rounds:\n", len(lat[kinds[0]]), rounds)
		for _, k := range []struct{ kind, label string }{
			{"muster", "muster attach"}, {"tmux", "tmux attach"}, {"relay", "minimal relay"},
			{"direct", "Go direct"}, {"epoll", "Go epoll"}, {"cepoll", "C epoll"},
		} {
			if len(lat[k.kind]) == 0 {
				continue
			}
			fmt.Printf("  %-14s p50 %v  p99 %v\n", k.label, p[k.kind][0], p[k.kind][1])
		}
		fmt.Printf("  muster/tmux  %s (target <= 1)\n", ratio("muster", "tmux"))
		fmt.Printf("  muster/relay %s\n", ratio("muster", "relay"))
		fmt.Printf("  direct/tmux  %s (a Go server holding the terminal)\n", ratio("direct", "tmux"))
		fmt.Printf("  epoll/tmux   %s (the same, one thread in epoll)\n", ratio("epoll", "tmux"))
		fmt.Printf("  cepoll/tmux  %s (the same loop in C, no runtime)\n", ratio("cepoll", "tmux"))
		fmt.Printf("  muster/cepoll %s\n", ratio("muster", "cepoll"))
	}
	if phase("esc") {
		// tmux with escape-time 10, as the anchor: its default
		// 500 ms is a setting every vim user lowers.
		self, err := os.Executable()
		must(err)
		var lat = map[string][]time.Duration{}
		kinds := []string{"muster", "tmux"}
		const rounds = 4
		for r := 0; r < rounds; r++ {
			for _, k := range kinds {
				lat[k] = append(lat[k], escLatency(k, self+" esc-echo x", max(*escKeys/rounds, 1))...)
			}
		}
		fmt.Printf("lone Esc to the pane over %d presses each, in %d alternating rounds (tmux escape-time 10):\n", len(lat["muster"]), rounds)
		for _, k := range kinds {
			ds := lat[k]
			fmt.Printf("  %-14s p50 %v  max %v\n", k+" attach", percentile(ds, 50), percentile(ds, 100))
		}
		fmt.Printf("  muster/tmux    p50 %.2fx max %.2fx (target <= 1)\n",
			float64(percentile(lat["muster"], 50))/float64(percentile(lat["tmux"], 50)),
			float64(percentile(lat["muster"], 100))/float64(percentile(lat["tmux"], 100)))
	}
	if phase("rss") {
		m, t := rssPerPane(), tmuxRSSPerPane()
		fmt.Printf("RSS per 80x24 pane after 10,000 full-width lines (%d panes each):\n", *rssPanes)
		fmt.Printf("  muster daemon                %7.2f MiB\n", m)
		fmt.Printf("  tmux server (history-limit 10000) %7.2f MiB\n", t)
		fmt.Printf("  muster/tmux                  %7.2fx (target <= 0.5)\n", m/t)
	}
	if phase("idle") {
		cpu := idleCPU()
		fmt.Printf("daemon CPU with %d idle panes over %ds: %.3f%% of a core (target < 0.5%%)\n", *panes, *idleSecs, cpu)
	}
}

// percentile is the pct-th percentile of ds, which it sorts.
func percentile(ds []time.Duration, pct int) time.Duration {
	slices.Sort(ds)
	return ds[min(len(ds)*pct/100, len(ds)-1)]
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "corebench:", err)
		os.Exit(1)
	}
}

func run(args ...string) string {
	out, err := exec.Command(*muster, args...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "muster %v: %v\n%s", args, err, out)
		os.Exit(1)
	}
	return string(out)
}

func makePayload(path string, size int) {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "\x1b[3%dmline %08d\x1b[0m the quick brown fox jumps over the lazy dog %d\n", i%8, i, i*7)
	}
	must(os.WriteFile(path, b.Bytes()[:size], 0o644))
}

const marker = "BENCH-DONE-MARK"

// timeRawPTY runs cat in a PTY and reads it to the end.
func timeRawPTY(payload string) time.Duration {
	cmd := exec.Command("sh", "-c", "cat "+payload+"; echo "+marker)
	start := time.Now()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 200, Rows: 50})
	must(err)
	readUntil(f, marker)
	d := time.Since(start)
	cmd.Wait()
	f.Close()
	return d
}

func readUntil(r interface{ Read([]byte) (int, error) }, mark string) {
	buf := make([]byte, 256<<10)
	var tail []byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			tail = append(tail, buf[:n]...)
			if bytes.Contains(tail, []byte(mark)) {
				return
			}
			if len(tail) > 64 {
				tail = tail[len(tail)-64:]
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "corebench: stream ended before the marker:", err)
			os.Exit(1)
		}
	}
}

// gatedCmd waits on a fifo so the clock starts when the client is ready.
func gatedCmd(payload, fifo string) string {
	return fmt.Sprintf("sh -c 'read x < %s; cat %s; echo %s; sleep 100000'", fifo, payload, marker)
}

func newFifo() string {
	f := filepath.Join(os.Getenv("MUSTER_HOME"), fmt.Sprintf("fifo%d", time.Now().UnixNano()))
	must(syscall.Mkfifo(f, 0o600))
	return f
}

func openGate(fifo string) time.Time {
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	must(err)
	start := time.Now()
	w.Write([]byte("go\n"))
	w.Close()
	return start
}

// socketRuns names each run's session anew.
var socketRuns int

// timeMusterSocket attaches one client speaking the protocol directly.
func timeMusterSocket(payload string) time.Duration {
	fifo := newFifo()
	socketRuns++
	name := fmt.Sprintf("tp%d", socketRuns)
	run("new", "--name", name, "--detach", "--cmd", gatedCmd(payload, fifo))
	conn, err := net.Dial("unix", filepath.Join(os.Getenv("MUSTER_HOME"), "run", "control.sock"))
	must(err)
	defer conn.Close()
	hello, _ := json.Marshal(proto.Request{Op: proto.OpHello, Args: json.RawMessage(fmt.Sprintf(`{"protocol":%d,"version":"corebench"}`, proto.ControlVersion))})
	req, _ := json.Marshal(proto.Request{Op: proto.OpAttach, Args: json.RawMessage(`{"name":"` + name + `","cols":200,"rows":50}`)})
	conn.Write(append(append(append(hello, '\n'), req...), '\n'))
	br := bufio.NewReaderSize(conn, 1<<20)
	for range 2 { // hello's response, then attach's
		if _, err := br.ReadBytes('\n'); err != nil {
			must(err)
		}
	}
	start := openGate(fifo)
	var tail []byte
	buf := make([]byte, 0, 1<<20)
	for {
		typ, p, err := proto.ReadFrame(br, buf)
		must(err)
		if typ == proto.FrameOutput || typ == proto.FrameSnapshot {
			tail = append(tail, p...)
			if bytes.Contains(tail, []byte(marker)) {
				break
			}
			if len(tail) > 64 {
				tail = append(tail[:0], tail[len(tail)-64:]...)
			}
		}
	}
	d := time.Since(start)
	run("kill", name)
	return d
}

// ptyReader owns the only goroutine that reads a PTY (its fd is blocking,
// so read deadlines do not work) and hands chunks over a channel.
type ptyReader struct {
	f  *os.File
	ch chan []byte
}

func newPTYReader(f *os.File) *ptyReader {
	r := &ptyReader{f: f, ch: make(chan []byte, 1024)}
	go func() {
		defer close(r.ch)
		for {
			buf := make([]byte, 64<<10)
			n, err := f.Read(buf)
			if n > 0 {
				r.ch <- buf[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

func (r *ptyReader) Read(p []byte) (int, error) {
	b, ok := <-r.ch
	if !ok {
		return 0, fmt.Errorf("pty closed")
	}
	return copy(p, b), nil // chunks are at most 64 KiB, p is larger
}

// drain discards output for d.
func (r *ptyReader) drain(d time.Duration) {
	deadline := time.After(d)
	for {
		select {
		case <-r.ch:
		case <-deadline:
			return
		}
	}
}

// newSession starts command in a muster pane, a tmux session or a relay
// server, and returns what attachPTY takes and how to end it.
func newSession(kind, name, command string) (target string, end func()) {
	switch kind {
	case "muster":
		run("new", "--name", name, "--detach", "--cmd", command)
		return name, func() { run("kill", name) }
	case "tmux":
		newTmux(name, command)
		return name, func() { exec.Command("tmux", "-L", "musterbench", "kill-session", "-t", name).Run() }
	case "direct", "epoll", "cepoll":
		// These servers start their program themselves, in attachPTY.
		return command, func() {}
	}
	return startRelay(command)
}

// attachPTY starts `muster attach`, `tmux attach` or the relay's client in
// a PTY of 200x50.
func attachPTY(kind, name string) (*os.File, *exec.Cmd) {
	switch kind {
	case "relay":
		return selfPTY("relay-client", name)
	case "direct", "epoll":
		return selfPTY(kind+"-server", name)
	case "cepoll":
		return startPTY(exec.Command(cepollBin(), name))
	}
	var cmd *exec.Cmd
	if kind == "muster" {
		cmd = exec.Command(*muster, "attach", name)
	} else {
		cmd = exec.Command("tmux", "-L", "musterbench", "attach", "-t", name)
	}
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	return startPTY(cmd)
}

func newTmux(name, command string) {
	out, err := exec.Command("tmux", "-L", "musterbench", "-f", "/dev/null", "new-session", "-d", "-s", name, "-x", "200", "-y", "50", command).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tmux: %v\n%s", err, out)
		os.Exit(1)
	}
}

func timeAttachPTY(payload, kind string) time.Duration {
	fifo := newFifo()
	name, end := newSession(kind, "ta"+kind, gatedCmd(payload, fifo))
	f, cmd := attachPTY(kind, name)
	r := newPTYReader(f)
	// Let the client draw its first screen before the clock starts.
	r.drain(300 * time.Millisecond)
	start := openGate(fifo)
	readUntil(r, marker)
	d := time.Since(start)
	cmd.Process.Kill()
	cmd.Wait()
	f.Close()
	end()
	return d
}

// echoLatency types keys into cat through kind's client, one at a time,
// and returns how long each took to come back.
func echoLatency(kind string, keys int) []time.Duration {
	name, end := newSession(kind, "lat"+kind, "cat")
	defer end()
	f, cmd := attachPTY(kind, name)
	r := newPTYReader(f)
	r.drain(500 * time.Millisecond)
	var lat []time.Duration
	buf := make([]byte, 64<<10)
	for i := 0; i < keys; i++ {
		if i > 0 && i%60 == 0 {
			f.Write([]byte("\r"))
			r.drain(50 * time.Millisecond)
		}
		c := byte('a' + i%26)
		start := time.Now()
		f.Write([]byte{c})
		for seen := false; !seen; {
			n, err := r.Read(buf)
			must(err)
			seen = bytes.IndexByte(buf[:n], c) >= 0
		}
		lat = append(lat, time.Since(start))
	}
	cmd.Process.Kill()
	cmd.Wait()
	f.Close()
	return lat
}

// escLatency presses a lone Esc keys times, one at a time, into command
// (escEcho) through kind's client and returns how long each took to reach
// the program.
func escLatency(kind, command string, keys int) []time.Duration {
	name, end := newSession(kind, "esc"+kind, command)
	defer end()
	if kind == "tmux" {
		must(exec.Command("tmux", "-L", "musterbench", "set", "-g", "escape-time", "10").Run())
	}
	f, cmd := attachPTY(kind, name)
	r := newPTYReader(f)
	readUntil(r, "esc-ready")
	r.drain(300 * time.Millisecond)
	var lat []time.Duration
	buf := make([]byte, 64<<10)
	for i := 0; i < keys; i++ {
		start := time.Now()
		f.Write([]byte{0x1b})
		for seen := false; !seen; {
			n, err := r.Read(buf)
			must(err)
			seen = bytes.IndexByte(buf[:n], 'E') >= 0
		}
		lat = append(lat, time.Since(start))
		// A person's next key comes later than the escape time.
		time.Sleep(30 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	f.Close()
	return lat
}

func daemonPID() int {
	var st struct{ PID int }
	json.Unmarshal([]byte(run("daemon", "status", "--json")), &st)
	return st.PID
}

func rssKiB(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			n, _ := strconv.Atoi(strings.Fields(l)[1])
			return n
		}
	}
	return 0
}

// freshDaemon restarts the daemon so that memory freed by earlier phases
// (which Go keeps mapped for a while) does not blur the next measurement.
func freshDaemon() int {
	run("daemon", "stop", "--force")
	run("ls")
	time.Sleep(time.Second)
	return daemonPID()
}

// fullWidthLines prints 10,000 lines of exactly 80 columns (issue 11: the
// scrollback benchmark must use full-width lines), then a marker.
const fullWidthLines = `seq 1 10000 | awk '{printf "%-80.80s\n", "line " $1 " of some typical agent output, eighty columns or so wide, with words and more words to fill"}'; echo RSS-DONE; sleep 100000`

// settle lets both servers finish with the output before RSS is read.
const settle = 3 * time.Second

func rssPerPane() float64 {
	pid := freshDaemon()
	before := rssKiB(pid)
	for i := 0; i < *rssPanes; i++ {
		run("new", "--name", fmt.Sprintf("rss%d", i), "--detach", "--cmd", fullWidthLines)
	}
	for i := 0; i < *rssPanes; i++ {
		for !strings.Contains(run("capture", fmt.Sprintf("rss%d", i)), "RSS-DONE") {
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(settle)
	after := rssKiB(pid)
	for i := 0; i < *rssPanes; i++ {
		run("kill", fmt.Sprintf("rss%d", i))
	}
	return float64(after-before) / 1024 / float64(*rssPanes)
}

func tmuxRSSPerPane() float64 {
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", "musterbench-rss", "-f", "/dev/null"}, args...)...).CombinedOutput()
		must(err)
		return string(out)
	}
	defer exec.Command("tmux", "-L", "musterbench-rss", "kill-server").Run()
	tmux("new-session", "-d", "-s", "base", "-x", "80", "-y", "24", "sleep 100000")
	tmux("set", "-g", "history-limit", "10000")
	pidOut := strings.TrimSpace(tmux("display", "-p", "#{pid}"))
	pid, err := strconv.Atoi(pidOut)
	must(err)
	time.Sleep(time.Second)
	before := rssKiB(pid)
	for i := 0; i < *rssPanes; i++ {
		tmux("new-window", "-d", "-t", "base", "-n", fmt.Sprintf("rss%d", i), fullWidthLines)
	}
	for i := 0; i < *rssPanes; i++ {
		for !strings.Contains(tmux("capture-pane", "-p", "-t", fmt.Sprintf("base:rss%d", i)), "RSS-DONE") {
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(settle)
	return float64(rssKiB(pid)-before) / 1024 / float64(*rssPanes)
}

func cpuTicks(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.Atoi(fields[11])
	st, _ := strconv.Atoi(fields[12])
	return u + st
}

func idleCPU() float64 {
	pid := freshDaemon()
	for i := 0; i < *panes; i++ {
		run("new", "--name", fmt.Sprintf("idle%d", i), "--detach", "--cmd", "bash --norc --noprofile")
	}
	time.Sleep(2 * time.Second)
	t0 := cpuTicks(pid)
	time.Sleep(time.Duration(*idleSecs) * time.Second)
	t1 := cpuTicks(pid)
	const hz = 100 // USER_HZ on Linux
	return float64(t1-t0) / hz / float64(*idleSecs) * 100
}
