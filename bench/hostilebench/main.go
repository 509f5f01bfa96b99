// Command hostilebench measures what following a growing transcript costs
// the Muster daemon (issue 22, point 4: every append re-parsed the whole
// file, 72 % of a core at 200 MB for Claude). For each provider and size it
// writes a transcript of that size under a temporary home, starts a
// daemon, waits for its first index, then appends one turn every -every
// for -secs while it samples the daemon's CPU time and RSS from /proc.
// The goal is a cost proportional to what was appended, not to the file:
// the same CPU at 20 MB and at 200 MB. bench/hostile.sh runs it.
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

	"github.com/musterhq/muster/internal/procfs"
	"github.com/musterhq/muster/internal/testing/bigtranscript"
)

func main() {
	muster := flag.String("muster", "muster", "the muster binary")
	providers := flag.String("providers", "claude,codex,gemini,cursor,muse,opencode", "providers to measure")
	sizes := flag.String("sizes", "20,200", "transcript sizes in MB")
	secs := flag.Int("secs", 20, "seconds of appending to measure")
	every := flag.Duration("every", 250*time.Millisecond, "one appended turn every")
	flag.Parse()
	fmt.Printf("%-9s %6s %12s %10s %10s %10s %12s\n", "provider", "MB", "appended KB", "CPU %", "RSS MB", "peak MB", "first index")
	for _, p := range strings.Split(*providers, ",") {
		for _, s := range strings.Split(*sizes, ",") {
			mb, err := strconv.Atoi(s)
			if err != nil {
				fatal(fmt.Errorf("-sizes: %v", err))
			}
			if err := run(*muster, p, int64(mb)<<20, time.Duration(*secs)*time.Second, *every); err != nil {
				fatal(fmt.Errorf("%s %d MB: %v", p, mb, err))
			}
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "hostilebench:", err)
	os.Exit(1)
}

func run(muster, provider string, size int64, secs, every time.Duration) error {
	root, err := os.MkdirTemp("/tmp", "mhb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	home, mhome := filepath.Join(root, "home"), filepath.Join(root, "m")
	env := append(os.Environ(), "HOME="+home, "MUSTER_HOME="+mhome, "XDG_RUNTIME_DIR=",
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"), "CODEX_HOME="+filepath.Join(home, ".codex"),
		"GEMINI_CLI_HOME="+home, "MUSE_AGENTS_DIR="+filepath.Join(home, "agents"))
	g, err := bigtranscript.New(provider, home)
	if err != nil {
		return err
	}
	if err := g.Fill(size); err != nil {
		return err
	}
	cmd := func(args ...string) error {
		c := exec.Command(muster, args...)
		c.Env = env
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("muster %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	start := time.Now()
	if err := cmd("ls"); err != nil {
		return err
	}
	defer cmd("daemon", "stop", "--force")
	pidb, err := os.ReadFile(filepath.Join(mhome, "run", "daemon.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidb)))
	if err != nil || pid <= 0 {
		if pid = daemonPID(mhome); pid <= 0 {
			return fmt.Errorf("no daemon pid under %s", mhome)
		}
	}
	logPath := filepath.Join(mhome, "state", "daemon.log")
	for !strings.Contains(readString(logPath), "transcript index refreshed") {
		if time.Since(start) > 10*time.Minute {
			return fmt.Errorf("the daemon never indexed the transcript")
		}
		time.Sleep(100 * time.Millisecond)
	}
	first := time.Since(start)
	time.Sleep(2 * time.Second) // the index refresh after it settles
	cpu0, t0 := cpuTicks(pid), time.Now()
	appended := g.Written
	var peak int64
	for time.Since(t0) < secs {
		if err := g.Turn(); err != nil {
			return err
		}
		peak = max(peak, procKB(pid, "VmRSS"))
		time.Sleep(every)
	}
	time.Sleep(1500 * time.Millisecond) // the debounced refresh of the last append
	cpu := float64(cpuTicks(pid)-cpu0) / 100 / time.Since(t0).Seconds() * 100
	appended = g.Written - appended
	fmt.Printf("%-9s %6d %12d %10.1f %10d %10d %12s\n", provider, size>>20, appended>>10, cpu, procKB(pid, "VmRSS")>>10, max(peak, procKB(pid, "VmHWM"))>>10, first.Round(time.Millisecond))
	return nil
}

// daemonPID finds the daemon whose environment names mhome.
func daemonPID(mhome string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline := readString("/proc/" + e.Name() + "/cmdline")
		if !strings.Contains(cmdline, "daemon") {
			continue
		}
		if strings.Contains(readString("/proc/"+e.Name()+"/environ"), "MUSTER_HOME="+mhome+"\x00") {
			return pid
		}
	}
	return 0
}

func readString(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// cpuTicks is utime+stime of pid in clock ticks (100 a second on Linux).
func cpuTicks(pid int) int64 {
	st, _ := procfs.FS{}.Stat(pid)
	return int64(st.UTime + st.STime)
}

func procKB(pid int, field string) int64 {
	for line := range strings.Lines(readString("/proc/" + strconv.Itoa(pid) + "/status")) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
