// Command outputbench prints hostile terminal output into one pane of
// a muster daemon and of a tmux server, side by side in one run (issue
// 22), and measures what it costs the server holding every pane: its CPU
// and RSS while the output runs, how long a capture of another, calm pane
// takes meanwhile, and how long ending the hostile pane takes. tmux is
// the anchor: it clamps every count to the screen.
//
// Usage: outputbench -muster BIN [-seconds 5]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/procfs"
)

var (
	muster  = flag.String("muster", "muster", "the muster binary")
	seconds = flag.Int("seconds", 5, "how long each hostile input runs")
)

// inputs are the issue's: thirteen bytes of REP once took the daemon 14 s
// and a loop never ended; ECH and the tab moves looped alike.
var inputs = []struct{ name, script string }{
	{"REP once (13 bytes)", `printf 'A\033[999999999b'; exec sleep 3600`},
	{"ECH, CHT, CBT once", `printf '\033[999999999X\033[999999999I\033[999999999Z'; exec sleep 3600`},
	{"REP, SU, ICH in a loop", `while :; do printf '\033[999999999S\033[H\033[999999999@A\033[999999999b'; done`},
}

func main() {
	flag.Parse()
	home, err := os.MkdirTemp("/tmp", "hb")
	must(err)
	defer os.RemoveAll(home)
	os.Setenv("MUSTER_HOME", home)
	os.Setenv("TMUX", "")
	defer exec.Command(*muster, "daemon", "stop", "--force").Run()
	defer exec.Command("tmux", "-L", "outputbench", "kill-server").Run()

	m := &musterKind{}
	t := &tmuxKind{}
	for _, k := range []kind{m, t} {
		k.start("calm", "cat")
	}
	fmt.Printf("hostile output in one pane, %d s each; the server's cost and a capture of another pane meanwhile:\n", *seconds)
	fmt.Printf("  %-24s %-7s %9s %9s %12s %12s %10s\n", "input", "server", "CPU %", "RSS MiB", "capture p50", "capture max", "kill")
	for i, in := range inputs {
		for _, k := range []kind{m, t} {
			r := measure(k, fmt.Sprintf("h%d", i), in.script)
			fmt.Printf("  %-24s %-7s %9.1f %9.1f %12v %12v %10v\n", in.name, k.name(), r.cpu, r.rssMiB, r.p50.Round(time.Microsecond), r.max.Round(time.Microsecond), r.kill.Round(time.Millisecond))
		}
	}
}

type result struct {
	cpu, rssMiB float64
	p50, max    time.Duration
	kill        time.Duration
}

// measure runs script in a new pane of k for the set time, capturing the
// calm pane all along, then ends the pane.
func measure(k kind, name, script string) result {
	k.start(name, "sh -c "+strconv.Quote(script))
	pid := k.pid()
	t0, c0 := time.Now(), cpuTicks(pid)
	var lat []time.Duration
	rss := 0
	for time.Since(t0) < time.Duration(*seconds)*time.Second {
		start := time.Now()
		k.capture("calm")
		lat = append(lat, time.Since(start))
		rss = max(rss, rssKiB(pid))
		time.Sleep(20 * time.Millisecond)
	}
	cpu := float64(cpuTicks(pid)-c0) / 100 / time.Since(t0).Seconds() * 100
	start := time.Now()
	k.kill(name)
	kill := time.Since(start)
	slices.Sort(lat)
	return result{cpu: cpu, rssMiB: float64(rss) / 1024, p50: lat[len(lat)/2], max: lat[len(lat)-1], kill: kill}
}

type kind interface {
	name() string
	start(name, command string)
	capture(name string)
	kill(name string)
	pid() int
}

type musterKind struct{}

func (musterKind) name() string { return "muster" }
func (musterKind) start(name, command string) {
	run(*muster, "new", "--name", name, "--detach", "--cmd", command)
}
func (musterKind) capture(name string) { run(*muster, "capture", name) }
func (musterKind) kill(name string)    { run(*muster, "kill", name) }
func (musterKind) pid() int {
	var st struct{ PID int }
	json.Unmarshal([]byte(run(*muster, "daemon", "status", "--json")), &st)
	return st.PID
}

type tmuxKind struct{ started bool }

func (*tmuxKind) name() string { return "tmux" }
func (t *tmuxKind) start(name, command string) {
	if !t.started {
		run("tmux", "-L", "outputbench", "-f", "/dev/null", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", command)
		t.started = true
		return
	}
	run("tmux", "-L", "outputbench", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", command)
}
func (*tmuxKind) capture(name string) {
	run("tmux", "-L", "outputbench", "capture-pane", "-p", "-t", name)
}
func (*tmuxKind) kill(name string) { run("tmux", "-L", "outputbench", "kill-session", "-t", name) }
func (*tmuxKind) pid() int {
	n, _ := strconv.Atoi(strings.TrimSpace(run("tmux", "-L", "outputbench", "display-message", "-p", "#{pid}")))
	return n
}

func run(args ...string) string {
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "outputbench: %v: %v\n", args, err)
		os.Exit(1)
	}
	return string(out)
}

// rssKiB is pid's resident set in KiB.
func rssKiB(pid int) int {
	st, _ := procfs.FS{}.Stat(pid)
	return int(st.RSSPages * int64(os.Getpagesize()) / 1024)
}

// cpuTicks is utime+stime of pid in clock ticks (100 a second on Linux).
func cpuTicks(pid int) int64 {
	st, _ := procfs.FS{}.Stat(pid)
	return int64(st.UTime + st.STime)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "outputbench:", err)
		os.Exit(1)
	}
}
