// Package bigtranscript writes transcripts in each provider's on-disk
// shape, of any size, one turn at a time, as an agent would: the
// heavy-transcript test (e2e/core) fills them to a gigabyte, and
// bench/hostilebench grows them while it measures the daemon.
package bigtranscript

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Writer appends turns to one transcript under a home directory laid out
// as the providers' defaults (CLAUDE_CONFIG_DIR=home/.claude,
// CODEX_HOME=home/.codex, GEMINI_CLI_HOME=home, ~/.cursor,
// MUSE_AGENTS_DIR=home/agents, XDG_DATA_HOME=home/.local/share).
type Writer struct {
	Provider string
	// Path is the file appended to (OpenCode: the session file, beside
	// which each turn adds message and part files).
	Path    string
	dir     string // OpenCode: its storage directory
	n       int
	Written int64 // bytes written, header included
}

// SessionID is the session every Writer writes.
const SessionID = "bbbbbbbb-0000-4000-8000-00000000000b"

// New creates the transcript of provider under home, with its header.
func New(provider, home string) (*Writer, error) {
	w := &Writer{Provider: provider}
	var header string
	switch provider {
	case "claude":
		w.Path = filepath.Join(home, ".claude", "projects", "-src-app", SessionID+".jsonl")
	case "codex":
		w.Path = filepath.Join(home, ".codex", "sessions", "2026", "03", "01", "rollout-2026-03-01T10-00-00-"+SessionID+".jsonl")
		header = `{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"` + SessionID + `","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/src/app","originator":"codex_cli_rs","cli_version":"0.77.0","source":"cli"}}` + "\n"
	case "gemini":
		w.Path = filepath.Join(home, ".gemini", "tmp", "proj", "chats", "session-2026-03-01T10-00-bbbbbbbb.jsonl")
		header = `{"sessionId":"` + SessionID + `","projectHash":"h","startTime":"2026-03-01T10:00:00Z","kind":"main"}` + "\n"
	case "cursor":
		w.Path = filepath.Join(home, ".cursor", "projects", "src-app", "agent-transcripts", SessionID+".jsonl")
	case "muse":
		w.Path = filepath.Join(home, "agents", "bench", "sessions", "bench.jsonl")
		header = `{"type":"session_header","session_id":"ses_bench","agent_id":"bench","created_at":"2026-03-01T10:00:00.000Z"}` + "\n"
	case "opencode":
		w.dir = filepath.Join(home, ".local", "share", "opencode", "storage")
		w.Path = filepath.Join(w.dir, "session", "proj", "ses_bench.json")
		header = `{"id":"ses_bench","title":"bench","directory":"/src/app","time":{"created":1772359200000,"updated":1772359200000}}`
	default:
		return nil, fmt.Errorf("unknown provider %q", provider)
	}
	if err := os.MkdirAll(filepath.Dir(w.Path), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(w.Path, []byte(header), 0o644); err != nil {
		return nil, err
	}
	w.Written = int64(len(header))
	return w, nil
}

var (
	output = strings.Repeat(`ok  	example.com/pkg/sub	0.012s\n`, 120) // about 4 KB of tool output
	reply  = strings.Repeat("The change compiles and the tests pass. ", 25)
	// quoted once: quoting it for every turn made writing a gigabyte
	// slow under the race detector
	quotedReply = strconv.Quote(reply)
)

// Turn appends one turn: a prompt, a tool call with its output and a
// reply, in one write.
func (w *Writer) Turn() error {
	if w.Provider == "opencode" {
		return w.openCodeTurn()
	}
	f, err := os.OpenFile(w.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	w.writeTurn(bw)
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Fill appends turns until the transcript holds at least size bytes.
func (w *Writer) Fill(size int64) error {
	if w.Provider == "opencode" {
		for w.Written < size {
			if err := w.openCodeTurn(); err != nil {
				return err
			}
		}
		return nil
	}
	f, err := os.OpenFile(w.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	for w.Written < size {
		w.writeTurn(bw)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeTurn writes the next turn's lines to bw, whose errors the caller
// reads at Flush.
func (w *Writer) writeTurn(bw *bufio.Writer) {
	w.n++
	n := w.n
	ts := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second).Format(time.RFC3339Nano)
	sid := SessionID
	var lines []string
	switch w.Provider {
	case "claude":
		lines = []string{
			fmt.Sprintf(`{"type":"user","sessionId":%q,"cwd":"/src/app","uuid":"u%d","timestamp":%q,"message":{"role":"user","content":"prompt %d"}}`, sid, n, ts, n),
			fmt.Sprintf(`{"type":"assistant","sessionId":%q,"cwd":"/src/app","uuid":"a%d","parentUuid":"u%d","timestamp":%q,"requestId":"r%d","message":{"id":"m%d","role":"assistant","model":"claude-sonnet-4","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"go test ./..."}}],"usage":{"input_tokens":100,"output_tokens":20}}}`, sid, n, n, ts, n, n, n),
			fmt.Sprintf(`{"type":"user","sessionId":%q,"cwd":"/src/app","uuid":"r%d","parentUuid":"a%d","timestamp":%q,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"%s"}]}}`, sid, n, n, ts, n, output),
			fmt.Sprintf(`{"type":"assistant","sessionId":%q,"cwd":"/src/app","uuid":"b%d","parentUuid":"r%d","timestamp":%q,"requestId":"r%db","message":{"id":"m%db","role":"assistant","model":"claude-sonnet-4","content":[{"type":"text","text":%s}],"usage":{"input_tokens":10,"output_tokens":50}}}`, sid, n, n, ts, n, n, quotedReply),
		}
	case "codex":
		lines = []string{
			fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"user_message","message":"prompt %d"}}`, ts, n),
			fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"go\",\"test\"]}","call_id":"c%d"}}`, ts, n),
			fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"function_call_output","call_id":"c%d","output":"%s"}}`, ts, n, output),
			fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"agent_message","message":%s}}`, ts, quotedReply),
		}
	case "gemini":
		lines = []string{
			fmt.Sprintf(`{"id":"u%d","type":"user","timestamp":%q,"content":[{"text":"prompt %d"}]}`, n, ts, n),
			fmt.Sprintf(`{"id":"g%d","type":"gemini","timestamp":%q,"model":"gemini-2.5-pro","content":%s,"toolCalls":[{"id":"c%d","name":"run_shell_command","args":{"command":"go test"},"status":"success","resultDisplay":"%s"}],"tokens":{"input":100,"output":20,"cached":0,"thoughts":0,"tool":0,"total":120}}`, n, ts, quotedReply, n, output),
		}
	case "cursor":
		lines = []string{
			fmt.Sprintf(`{"role":"user","message":{"content":[{"type":"text","text":"<user_query>prompt %d</user_query>"}]}}`, n),
			fmt.Sprintf(`{"role":"assistant","message":{"content":[{"type":"text","text":%s},{"type":"tool_use","name":"Shell","input":{"command":"go test"}}]}}`, quotedReply),
		}
	case "muse":
		lines = []string{
			fmt.Sprintf(`{"type":"item","seq":%d,"source":"user","created_at":%q,"item":{"type":"message","role":"user","text":"prompt %d"}}`, 3*n, ts, n),
			fmt.Sprintf(`{"type":"item","seq":%d,"source":"runtime","created_at":%q,"item":{"type":"function_call","call_id":"c%d","name":"exec","arguments":"{\"cmd\":\"go test\"}"}}`, 3*n+1, ts, n),
			fmt.Sprintf(`{"type":"item","seq":%d,"source":"runtime","created_at":%q,"item":{"type":"function_call_output","call_id":"c%d","output":"%s","success":true}}`, 3*n+2, ts, n, output),
		}
	}
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte('\n')
		w.Written += int64(len(l) + 1)
	}
}

// openCodeTurn adds a legacy session's turn: a message file and a part
// file for the prompt and for the reply.
func (w *Writer) openCodeTurn() error {
	w.n++
	n := w.n
	created := 1772359200000 + int64(n)*1000
	for i, body := range []string{
		fmt.Sprintf(`{"id":"msg_%08du","sessionID":"ses_bench","role":"user","time":{"created":%d}}`, n, created),
		fmt.Sprintf(`{"id":"msg_%08da","sessionID":"ses_bench","role":"assistant","modelID":"m","time":{"created":%d,"completed":%d}}`, n, created+1, created+2),
	} {
		kind := "ua"[i : i+1]
		id := fmt.Sprintf("msg_%08d%s", n, kind)
		if err := writeFile(filepath.Join(w.dir, "message", "ses_bench", id+".json"), body); err != nil {
			return err
		}
		text := fmt.Sprintf("prompt %d", n)
		if kind == "a" {
			text = reply + output
		}
		part := fmt.Sprintf(`{"id":"prt_%08d%s","type":"text","text":%q}`, n, kind, text)
		if err := writeFile(filepath.Join(w.dir, "part", id, "prt_1.json"), part); err != nil {
			return err
		}
		w.Written += int64(len(body) + len(part))
	}
	return nil
}

func writeFile(path, body string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(body), 0o644)
}
