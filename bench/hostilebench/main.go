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
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/procfs"
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
	g, err := newGen(provider, home)
	if err != nil {
		return err
	}
	for g.written < size {
		if err := g.turn(); err != nil {
			return err
		}
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
	appended := g.written
	var peak int64
	for time.Since(t0) < secs {
		if err := g.turn(); err != nil {
			return err
		}
		peak = max(peak, procKB(pid, "VmRSS"))
		time.Sleep(every)
	}
	time.Sleep(1500 * time.Millisecond) // the debounced refresh of the last append
	cpu := float64(cpuTicks(pid)-cpu0) / 100 / time.Since(t0).Seconds() * 100
	appended = g.written - appended
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

// gen appends turns of one provider's transcript format.
type gen struct {
	provider string
	path     string // the file appended to (opencode: the session file)
	dir      string // opencode: storage
	n        int
	written  int64
}

const sid = "bbbbbbbb-0000-4000-8000-00000000000b"

func newGen(provider, home string) (*gen, error) {
	g := &gen{provider: provider}
	var header string
	switch provider {
	case "claude":
		g.path = filepath.Join(home, ".claude", "projects", "-src-app", sid+".jsonl")
	case "codex":
		g.path = filepath.Join(home, ".codex", "sessions", "2026", "03", "01", "rollout-2026-03-01T10-00-00-"+sid+".jsonl")
		header = `{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"` + sid + `","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/src/app","originator":"codex_cli_rs","cli_version":"0.77.0","source":"cli"}}` + "\n"
	case "gemini":
		g.path = filepath.Join(home, ".gemini", "tmp", "proj", "chats", "session-2026-03-01T10-00-bbbbbbbb.jsonl")
		header = `{"sessionId":"` + sid + `","projectHash":"h","startTime":"2026-03-01T10:00:00Z","kind":"main"}` + "\n"
	case "cursor":
		g.path = filepath.Join(home, ".cursor", "projects", "src-app", "agent-transcripts", sid+".jsonl")
	case "muse":
		g.path = filepath.Join(home, "agents", "bench", "sessions", "bench.jsonl")
		header = `{"type":"session_header","session_id":"ses_bench","agent_id":"bench","created_at":"2026-03-01T10:00:00.000Z"}` + "\n"
	case "opencode":
		g.dir = filepath.Join(home, ".local", "share", "opencode", "storage")
		g.path = filepath.Join(g.dir, "session", "proj", "ses_bench.json")
		header = `{"id":"ses_bench","title":"bench","directory":"/src/app","time":{"created":1772359200000,"updated":1772359200000}}`
	default:
		return nil, fmt.Errorf("unknown provider %q", provider)
	}
	if err := os.MkdirAll(filepath.Dir(g.path), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(g.path, []byte(header), 0o644); err != nil {
		return nil, err
	}
	g.written = int64(len(header))
	return g, nil
}

var (
	output = strings.Repeat(`ok  	example.com/pkg/sub	0.012s\n`, 120) // about 4 KB of tool output
	reply  = strings.Repeat("The change compiles and the tests pass. ", 25)
)

// turn appends one prompt, one tool call with its output, and one reply.
func (g *gen) turn() error {
	g.n++
	n := g.n
	ts := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second).Format(time.RFC3339Nano)
	var lines []string
	switch g.provider {
	case "claude":
		lines = []string{
			fmt.Sprintf(`{"type":"user","sessionId":%q,"cwd":"/src/app","uuid":"u%d","timestamp":%q,"message":{"role":"user","content":"prompt %d"}}`, sid, n, ts, n),
			fmt.Sprintf(`{"type":"assistant","sessionId":%q,"cwd":"/src/app","uuid":"a%d","parentUuid":"u%d","timestamp":%q,"requestId":"r%d","message":{"id":"m%d","role":"assistant","model":"claude-sonnet-4","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"go test ./..."}}],"usage":{"input_tokens":100,"output_tokens":20}}}`, sid, n, n, ts, n, n, n),
			fmt.Sprintf(`{"type":"user","sessionId":%q,"cwd":"/src/app","uuid":"r%d","parentUuid":"a%d","timestamp":%q,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"%s"}]}}`, sid, n, n, ts, n, output),
			fmt.Sprintf(`{"type":"assistant","sessionId":%q,"cwd":"/src/app","uuid":"b%d","parentUuid":"r%d","timestamp":%q,"requestId":"r%db","message":{"id":"m%db","role":"assistant","model":"claude-sonnet-4","content":[{"type":"text","text":%q}],"usage":{"input_tokens":10,"output_tokens":50}}}`, sid, n, n, ts, n, n, reply),
		}
	case "codex":
		lines = []string{
			fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"user_message","message":"prompt %d"}}`, ts, n),
			fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"go\",\"test\"]}","call_id":"c%d"}}`, ts, n),
			fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"function_call_output","call_id":"c%d","output":"%s"}}`, ts, n, output),
			fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"agent_message","message":%q}}`, ts, reply),
		}
	case "gemini":
		lines = []string{
			fmt.Sprintf(`{"id":"u%d","type":"user","timestamp":%q,"content":[{"text":"prompt %d"}]}`, n, ts, n),
			fmt.Sprintf(`{"id":"g%d","type":"gemini","timestamp":%q,"model":"gemini-2.5-pro","content":%q,"toolCalls":[{"id":"c%d","name":"run_shell_command","args":{"command":"go test"},"status":"success","resultDisplay":"%s"}],"tokens":{"input":100,"output":20,"cached":0,"thoughts":0,"tool":0,"total":120}}`, n, ts, reply, n, output),
		}
	case "cursor":
		lines = []string{
			fmt.Sprintf(`{"role":"user","message":{"content":[{"type":"text","text":"<user_query>prompt %d</user_query>"}]}}`, n),
			fmt.Sprintf(`{"role":"assistant","message":{"content":[{"type":"text","text":%q},{"type":"tool_use","name":"Shell","input":{"command":"go test"}}]}}`, reply),
		}
	case "muse":
		lines = []string{
			fmt.Sprintf(`{"type":"item","seq":%d,"source":"user","created_at":%q,"item":{"type":"message","role":"user","text":"prompt %d"}}`, 3*n, ts, n),
			fmt.Sprintf(`{"type":"item","seq":%d,"source":"runtime","created_at":%q,"item":{"type":"function_call","call_id":"c%d","name":"exec","arguments":"{\"cmd\":\"go test\"}"}}`, 3*n+1, ts, n),
			fmt.Sprintf(`{"type":"item","seq":%d,"source":"runtime","created_at":%q,"item":{"type":"function_call_output","call_id":"c%d","output":"%s","success":true}}`, 3*n+2, ts, n, output),
		}
	case "opencode":
		// A legacy session grows by message and part files.
		created := 1772359200000 + int64(n)*1000
		for i, body := range []string{
			fmt.Sprintf(`{"id":"msg_%08du","sessionID":"ses_bench","role":"user","time":{"created":%d}}`, n, created),
			fmt.Sprintf(`{"id":"msg_%08da","sessionID":"ses_bench","role":"assistant","modelID":"m","time":{"created":%d,"completed":%d}}`, n, created+1, created+2),
		} {
			kind := "ua"[i : i+1]
			id := fmt.Sprintf("msg_%08d%s", n, kind)
			if err := writeFile(filepath.Join(g.dir, "message", "ses_bench", id+".json"), body); err != nil {
				return err
			}
			text := fmt.Sprintf("prompt %d", n)
			if kind == "a" {
				text = reply + output
			}
			part := fmt.Sprintf(`{"id":"prt_%08d%s","type":"text","text":%q}`, n, kind, text)
			if err := writeFile(filepath.Join(g.dir, "part", id, "prt_1.json"), part); err != nil {
				return err
			}
			g.written += int64(len(body) + len(part))
		}
		return nil
	}
	f, err := os.OpenFile(g.path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		w.WriteString(l)
		w.WriteByte('\n')
		g.written += int64(len(l) + 1)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeFile(path, body string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(body), 0o644)
}
