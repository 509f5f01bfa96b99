// Command tailbench measures what following agents' transcripts costs the
// Muster daemon (issue 10: 20 live agent panes, idle, at most 1% of a
// core), beside its anchors in one run: the same daemon with as many idle
// shell panes (what a pane costs without an agent), and tmux running the
// same agents. The agents are internal/testing/fakeagent as Claude Code,
// Codex and Gemini CLI, hook-less, each in its own directory under
// temporary homes, writing real-shaped transcripts; each has done one turn
// before the measure, so its transcript is followed. With -busy, a second
// measure has every agent run a turn every -every (a prompt and a reply
// record each), in Muster and in tmux alike.
//
// CPU is the process's utime+stime from /proc/PID/stat over -secs.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

var (
	muster    = flag.String("muster", "muster", "muster binary")
	fakeagent = flag.String("fakeagent", "", "directory of the fakeagent binary and its claude, codex, gemini links")
	panes     = flag.Int("panes", 20, "agent panes")
	secs      = flag.Int("secs", 30, "seconds of each measure")
	busy      = flag.Bool("busy", false, "also measure agents that run a turn every -every")
	every     = flag.Duration("every", 5*time.Second, "with -busy: how often each agent runs a turn")
)

var personas = []string{"claude", "codex", "gemini"}

func main() {
	flag.Parse()
	if *fakeagent == "" {
		fail("-fakeagent is required (bench/tail.sh builds it)")
	}
	root, err := os.MkdirTemp("/tmp", "tailbench")
	must(err)
	defer os.RemoveAll(root)
	env := []string{
		"HOME=" + filepath.Join(root, "home"),
		"MUSTER_HOME=" + filepath.Join(root, "muster"),
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"PATH=" + *fakeagent + string(os.PathListSeparator) + os.Getenv("PATH"),
		"FAKEAGENT_NO_HOOKS=1",
		"FAKEAGENT_IDLE_DELAY=off",
		"TERM=xterm-256color",
		"TMUX=",
	}
	for _, d := range []string{"home", "muster", "tmp"} {
		must(os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	m := &bench{root: root, env: env}
	defer m.muster("daemon", "stop", "--force")
	defer func() {
		if m.sock != "" {
			exec.Command("tmux", "-L", m.sock, "kill-server").Run()
		}
	}()

	shells := m.musterShells()
	agents := m.musterAgents("")
	tm := m.tmuxAgents("")
	load := loadavg()
	fmt.Printf("%d panes, idle, CPU over %ds (load average %s):\n", *panes, *secs, load)
	fmt.Printf("  muster daemon, idle shells            %6.3f%% of a core\n", shells)
	fmt.Printf("  muster daemon, idle agents (tailed)   %6.3f%% of a core (target <= 1%%)\n", agents)
	fmt.Printf("  tailing cost (agents - shells)        %6.3f%% of a core\n", agents-shells)
	fmt.Printf("  tmux server, the same idle agents     %6.3f%% of a core\n", tm)
	fmt.Printf("  muster/tmux                           %s\n", ratio(agents, tm))
	if *busy {
		// FAKEAGENT_SCRIPT: the agent types these at start, one turn
		// after the other.
		script := filepath.Join(root, "script")
		var b strings.Builder
		b.WriteString("reply hello\n")
		n := int(time.Duration(*secs+120)*time.Second / *every) + 1
		for range n {
			fmt.Fprintf(&b, "sleep %d\n", every.Milliseconds())
		}
		must(os.WriteFile(script, []byte(b.String()), 0o644))
		ma := m.musterAgents(script)
		ta := m.tmuxAgents(script)
		fmt.Printf("%d panes, a turn every %s each, CPU over %ds (load average %s):\n", *panes, *every, *secs, loadavg())
		fmt.Printf("  muster daemon                         %6.3f%% of a core\n", ma)
		fmt.Printf("  tmux server                           %6.3f%% of a core\n", ta)
		fmt.Printf("  muster/tmux                           %s\n", ratio(ma, ta))
	}
}

type bench struct {
	root  string
	env   []string
	runs  int
	phase int
	sock  string // the tmux server's -L
}

func (b *bench) muster(args ...string) string {
	return b.musterEnv(nil, args...)
}

func (b *bench) musterEnv(extra []string, args ...string) string {
	cmd := exec.Command(*muster, args...)
	cmd.Env = append(append([]string(nil), b.env...), extra...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		fail(fmt.Sprintf("muster %v: %v\n%s", args, err, out))
	}
	return string(out)
}

func (b *bench) tmux(args ...string) string {
	return b.tmuxEnv(nil, args...)
}

func (b *bench) tmuxEnv(extra []string, args ...string) string {
	cmd := exec.Command("tmux", append([]string{"-L", b.sock}, args...)...)
	cmd.Env = append(append([]string(nil), b.env...), extra...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		fail(fmt.Sprintf("tmux %v: %v\n%s", args, err, out))
	}
	return string(out)
}

// freshDaemon stops the daemon and starts one with a new MUSTER_HOME (no
// sessions, none restorable), and returns its pid.
func (b *bench) freshDaemon() int {
	b.muster("daemon", "stop", "--force")
	b.phase++
	home := filepath.Join(b.root, fmt.Sprintf("muster%d", b.phase))
	must(os.MkdirAll(home, 0o755))
	for i, kv := range b.env {
		if strings.HasPrefix(kv, "MUSTER_HOME=") {
			b.env[i] = "MUSTER_HOME=" + home
		}
	}
	b.muster("ls")
	out := b.muster("daemon", "status", "--json")
	i := strings.Index(out, `"pid":`)
	if i < 0 {
		fail("daemon status has no pid: " + out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.Split(strings.Split(out[i+6:], ",")[0], "}")[0]))
	must(err)
	return pid
}

// dir returns a fresh working directory for agent i.
func (b *bench) dir(i int) string {
	b.runs++
	d := filepath.Join(b.root, "work", fmt.Sprintf("r%d-p%d", b.runs, i))
	must(os.MkdirAll(d, 0o755))
	return d
}

func (b *bench) musterShells() float64 {
	pid := b.freshDaemon()
	for i := range *panes {
		b.muster("new", "--name", fmt.Sprintf("sh%d", i), "--dir", b.dir(i), "--detach", "--cmd", "bash --norc --noprofile")
	}
	return cpu(pid)
}

// musterAgents starts the agents in Muster panes (first-class launches),
// each after one turn ("reply hello"), typed, or the first line of script
// (FAKEAGENT_SCRIPT), whose other turns then follow.
func (b *bench) musterAgents(script string) float64 {
	pid := b.freshDaemon()
	var extra []string
	if script != "" {
		extra = []string{"FAKEAGENT_SCRIPT=" + script}
	}
	for i := range *panes {
		b.musterEnv(extra, "new", personas[i%len(personas)], "--name", fmt.Sprintf("ag%d", i), "--dir", b.dir(i), "--detach")
	}
	for i := range *panes {
		name := fmt.Sprintf("ag%d", i)
		if script == "" {
			b.waitScreen(func() string { return b.muster("capture", name) }, "\n>")
			b.muster("send", name, "reply hello", "--enter")
		}
		b.waitScreen(func() string { return b.muster("capture", name) }, "hello")
	}
	return cpu(pid)
}

// tmuxAgents starts the same agents in tmux windows.
func (b *bench) tmuxAgents(script string) float64 {
	// A server of its own per measure: a killed one takes a moment to go.
	if b.sock != "" {
		exec.Command("tmux", "-L", b.sock, "kill-server").Run()
	}
	b.phase++
	b.sock = fmt.Sprintf("tailbench%d-%d", os.Getpid(), b.phase)
	var extra []string
	if script != "" {
		extra = []string{"FAKEAGENT_SCRIPT=" + script}
	}
	b.tmuxEnv(extra, "new-session", "-d", "-s", "base", "-x", "80", "-y", "24")
	for i := range *panes {
		b.tmux("new-window", "-d", "-t", "base", "-n", fmt.Sprintf("ag%d", i), "-c", b.dir(i), personas[i%len(personas)])
	}
	for i := range *panes {
		w := fmt.Sprintf("base:ag%d", i)
		if script == "" {
			b.waitScreen(func() string { return b.tmux("capture-pane", "-p", "-t", w) }, "\n>")
			b.tmux("send-keys", "-t", w, "reply hello", "Enter")
		}
		b.waitScreen(func() string { return b.tmux("capture-pane", "-p", "-t", w) }, "hello")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(b.tmux("display-message", "-p", "#{pid}")))
	must(err)
	return cpu(pid)
}

func (b *bench) waitScreen(screen func() string, want string) {
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains("\n"+screen(), want) {
		if time.Now().After(deadline) {
			fail(fmt.Sprintf("the screen never showed %q:\n%s", want, screen()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cpu is pid's CPU over -secs, in percent of a core, after the panes
// settle.
func cpu(pid int) float64 {
	time.Sleep(2 * time.Second)
	t0 := cpuTicks(pid)
	time.Sleep(time.Duration(*secs) * time.Second)
	t1 := cpuTicks(pid)
	const hz = 100 // USER_HZ on Linux
	return float64(t1-t0) / hz / float64(*secs) * 100
}

func cpuTicks(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	must(err)
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.Atoi(fields[11])
	st, _ := strconv.Atoi(fields[12])
	return u + st
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// ratio is a/b for the report; tmux idle often uses less than one tick
// (10 ms) in the whole measure.
func ratio(a, b float64) string {
	if b == 0 {
		return "n/a (under one clock tick for the anchor)"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "tailbench:", msg)
	os.Exit(1)
}
