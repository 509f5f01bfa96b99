package core_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"encoding/json"

	"github.com/musterhq/muster/internal/testing/bigtranscript"
	"github.com/musterhq/muster/internal/testing/poll"
)

// writeGeminiChat writes a legacy single-document Gemini CLI chat of about
// size bytes: prompts, replies and tool calls with large results.
func writeGeminiChat(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprint(w, `{"sessionId":"big00000-0000-4000-8000-000000000001","projectHash":"h","startTime":"2026-03-01T10:00:00Z","lastUpdated":"2026-03-01T12:00:00Z","messages":[`)
	reply := strings.Repeat("the quick brown fox jumps over the lazy dog. ", 400) // 18 KB
	result := strings.Repeat("line of build output from a tool call\\n", 2000)    // 76 KB
	var n int64
	for i := 0; n < size; i++ {
		if i > 0 {
			w.WriteByte(',')
		}
		m := fmt.Sprintf(`{"id":"u%d","type":"user","timestamp":"2026-03-01T10:00:00Z","content":[{"text":"prompt number %d"}]},`+
			`{"id":"g%d","type":"gemini","timestamp":"2026-03-01T10:00:01Z","model":"gemini-2.5-pro","content":"%s",`+
			`"toolCalls":[{"id":"c%d","name":"run_shell_command","args":{"command":"go test ./..."},"status":"success","result":[{"functionResponse":{"id":"c%d","name":"run_shell_command","response":{"output":"%s"}}}]}],`+
			`"tokens":{"input":1000,"output":200,"cached":0,"thoughts":0,"tool":0,"total":1200}}`, i, i, i, reply, i, i, result)
		w.WriteString(m)
		n += int64(len(m))
	}
	fmt.Fprint(w, `]}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// writeOpenCodeExport writes an `opencode export` document of about size
// bytes.
func writeOpenCodeExport(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprint(w, `{"info":{"id":"ses_big","title":"big export","directory":"/src/big","time":{"created":1772359200000,"updated":1772362800000}},"messages":[`)
	text := strings.Repeat("an assistant reply that goes on and on. ", 1500) // 60 KB
	var n int64
	for i := 0; n < size; i++ {
		if i > 0 {
			w.WriteByte(',')
		}
		m := fmt.Sprintf(`{"info":{"id":"msg_u%d","role":"user","time":{"created":1772359200000}},"parts":[{"id":"prt_u%d","type":"text","text":"prompt %d"}]},`+
			`{"info":{"id":"msg_a%d","role":"assistant","modelID":"m","time":{"created":1772359201000,"completed":1772359202000}},"parts":[{"id":"prt_a%d","type":"text","text":"%s"}]}`, i, i, i, i, i, text)
		w.WriteString(m)
		n += int64(len(m))
	}
	fmt.Fprint(w, `]}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// procKB reads a "VmRSS:"-style field of /proc/PID/status in KiB.
func procKB(pid int, field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

// heavyShape is one transcript shape the heavy test indexes: write
// generates it under a staging home and returns its path there; log, for
// a log an agent appends to, is its writer.
type heavyShape struct {
	provider string
	size     int64
	write    func(t *testing.T, home string, size int64) string
	path     string
	log      *bigtranscript.Writer
}

// jsonlShape is a provider's JSONL log, written turn by turn as an agent
// writes it (internal/testing/bigtranscript, which bench/hostilebench
// grows too).
func jsonlShape(provider string, size int64) *heavyShape {
	s := &heavyShape{provider: provider, size: size}
	s.write = func(t *testing.T, home string, size int64) string {
		w, err := bigtranscript.New(provider, home)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Fill(size); err != nil {
			t.Fatal(err)
		}
		s.log = w
		return w.Path
	}
	return s
}

// readRE is what a refresh of the transcript index says it read.
var readRE = regexp.MustCompile(`"read":(\d+)`)

// TestHeavyTranscriptsBoundedMemory generates a transcript of each shape
// the parsers read, 1 GB each (a 300 MB OpenCode export), and indexes
// them: with `muster history` (its peak RSS), then with the daemon's
// watcher one at a time (its peak above the RSS it had before, reset
// between shapes, and what it keeps); it follows each JSONL log while a
// turn is appended every 250 ms, as an agent would, reading only what
// was appended. Issue 22 measured 4.2 GB and 945 MB for history and 3.18
// GB kept by the daemon for the Gemini and OpenCode documents, and the
// daemon's first read of a 200 MB Codex rollout peaked at 453 MB; the
// goal is 64 MB above idle. (The native estimator also tails the
// transcript of an agent in a pane, 4 MB a poll at most: bounded by
// design, and minutes for a gigabyte, so no pane is driven here.)
func TestHeavyTranscriptsBoundedMemory(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	const gb = int64(1 << 30)
	shapes := []*heavyShape{
		{provider: "gemini", size: gb, write: func(t *testing.T, home string, size int64) string {
			path := filepath.Join(home, ".gemini", "tmp", "proj", "chats", "session-2026-03-01T10-00-big00000.json")
			os.MkdirAll(filepath.Dir(path), 0o755)
			writeGeminiChat(t, path, size)
			return path
		}},
		{provider: "opencode", size: gb * 3 / 10, write: func(t *testing.T, home string, size int64) string {
			path := filepath.Join(home, ".local", "share", "opencode", "storage", "session", "proj", "ses_big.json")
			os.MkdirAll(filepath.Dir(path), 0o755)
			writeOpenCodeExport(t, path, size)
			return path
		}},
		jsonlShape("claude", gb),
		jsonlShape("codex", gb),
		jsonlShape("cursor", gb),
		jsonlShape("muse", gb),
	}
	if s := os.Getenv("MUSTER_HEAVY_MB"); s != "" { // a smaller run while working on it
		mb, _ := strconv.ParseInt(s, 10, 64)
		for _, sh := range shapes {
			sh.size = sh.size / 1024 * mb
		}
	}
	stage := t.TempDir()
	for _, sh := range shapes {
		sh.path = sh.write(t, stage, sh.size)
	}
	// place links a shape's transcript into home, where its provider
	// looks (the homes' layouts are the stage's: see newEnv), and
	// returns its path there.
	place := func(sh *heavyShape, home string) string {
		rel, _ := filepath.Rel(stage, sh.path)
		dst := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.Link(sh.path, dst); err != nil {
			t.Fatal(err)
		}
		return dst
	}

	d := newEnv(t)
	// `muster history` in a home of its own with no daemon: the CLI
	// indexes on its own.
	cliHome, cliMuster := t.TempDir(), t.TempDir()
	var cliVars []string
	for _, kv := range d.vars {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "MUSTER_HOME":
			v = cliMuster
		case strings.HasPrefix(v, d.userHome()):
			v = cliHome + strings.TrimPrefix(v, d.userHome())
		}
		cliVars = append(cliVars, k+"="+v)
	}
	for _, sh := range shapes {
		place(sh, cliHome)
		cmd := exec.Command(d.bin, "history", "--json", "--provider", sh.provider)
		cmd.Env = cliVars
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("history --provider %s: %v", sh.provider, err)
		}
		var list []struct {
			PromptCount int `json:"prompt_count"`
		}
		if err := json.Unmarshal(out, &list); err != nil || len(list) != 1 || list[0].PromptCount == 0 {
			t.Fatalf("history --provider %s: %v %s", sh.provider, err, out)
		}
		maxRSS := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
		t.Logf("muster history --provider %s (%d MB): peak RSS %d MB", sh.provider, sh.size>>20, maxRSS>>10)
	}

	// The daemon's watcher.
	d.ls()
	var st struct{ PID int }
	if err := json.Unmarshal([]byte(d.must("daemon", "status", "--json")), &st); err != nil || st.PID <= 0 {
		t.Fatalf("daemon status: %v", err)
	}
	time.Sleep(3 * time.Second) // its first refresh (of nothing) and start-up garbage
	idle := procKB(st.PID, "VmRSS")
	t.Logf("daemon: idle RSS %d MB (peak so far %d MB)", idle>>10, procKB(st.PID, "VmHWM")>>10)
	logPath := filepath.Join(d.home, "state", "daemon.log")
	// resetPeak starts VmHWM again from the current RSS.
	resetPeak := func() {
		if err := os.WriteFile("/proc/"+strconv.Itoa(st.PID)+"/clear_refs", []byte("5"), 0); err != nil {
			t.Fatalf("reset the daemon's peak RSS: %v", err)
		}
	}
	for _, sh := range shapes {
		logged, _ := os.ReadFile(logPath)
		before := procKB(st.PID, "VmRSS")
		resetPeak()
		placed := place(sh, d.userHome())
		// A refresh of this provider that parsed something, logged
		// after the placement.
		indexed := func() bool {
			b, _ := os.ReadFile(logPath)
			for line := range strings.Lines(string(b[min(len(b), len(logged)):])) {
				if strings.Contains(line, "transcript index refreshed") && strings.Contains(line, sh.provider) && !strings.Contains(line, `"parsed":0`) {
					return true
				}
			}
			return false
		}
		deadline := time.Now().Add(10 * time.Minute)
		for !indexed() && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
		if !indexed() {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("the daemon never indexed the %s transcript; daemon.log:\n%s", sh.provider, b)
		}
		peak := procKB(st.PID, "VmHWM")
		t.Logf("daemon, %s %d MB: RSS before %d MB, peak while indexing %d MB (+%d MB)", sh.provider, sh.size>>20, before>>10, peak>>10, (peak-before)>>10)
		if grow := (peak - before) >> 10; grow > 64 {
			t.Errorf("the daemon's peak RSS while indexing the %s transcript was %d MB above what it had before; the goal is 64 MB", sh.provider, grow)
		}
		if sh.log != nil {
			// An agent appending to it: the daemon follows, reading what
			// was appended. Through the path the daemon watches: a
			// write through another link of the file is not seen.
			sh.log.Path = placed
			following := procKB(st.PID, "VmRSS")
			logged, _ = os.ReadFile(logPath)
			written := sh.log.Written
			resetPeak()
			for range 12 {
				if err := sh.log.Turn(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(250 * time.Millisecond)
			}
			appended := sh.log.Written - written
			var read int64
			if !poll.Until(20*time.Second, func() bool {
				b, _ := os.ReadFile(logPath)
				read = 0
				for _, m := range readRE.FindAllSubmatch(b[min(len(b), len(logged)):], -1) {
					n, _ := strconv.ParseInt(string(m[1]), 10, 64)
					read += n
				}
				return read >= appended
			}) {
				t.Errorf("the daemon read %d bytes of the %d appended to the %s transcript", read, appended, sh.provider)
			}
			peak = procKB(st.PID, "VmHWM")
			t.Logf("daemon, following %s: %d KB appended, %d KB read; RSS before %d MB, peak %d MB (+%d MB)",
				sh.provider, appended>>10, read>>10, following>>10, peak>>10, (peak-following)>>10)
			if read > appended {
				t.Errorf("the daemon read %d bytes to follow %d appended to the %s transcript", read, appended, sh.provider)
			}
			if grow := (peak - following) >> 10; grow > 64 {
				t.Errorf("the daemon's peak RSS while following the %s transcript was %d MB above what it had before; the goal is 64 MB", sh.provider, grow)
			}
		}
		// What it keeps of this transcript: the follow in progress (its
		// summary state, its capped full-text row), whatever the
		// transcript's size.
		time.Sleep(2 * time.Second)
		after := procKB(st.PID, "VmRSS")
		t.Logf("daemon, %s: RSS after %d MB (+%d MB)", sh.provider, after>>10, (after-before)>>10)
		if kept := (after - before) >> 10; kept > 64 {
			t.Errorf("the daemon kept %d MB above what it had before indexing the %s transcript", kept, sh.provider)
		}
	}
	// The follows of all of them (the index keeps up to 16).
	time.Sleep(10 * time.Second)
	t.Logf("daemon: RSS 10 s after the last %d MB (idle %d MB)", procKB(st.PID, "VmRSS")>>10, idle>>10)
	d.ls() // still answering
}
