package codexroute

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// ErrNoRollout means no rollout file exists (yet) for the session.
var ErrNoRollout = errors.New("no rollout file for the session")

// ValidSessionID reports whether id can name a rollout: letters, digits, '-'
// and '_' only, so it can never escape the sessions directory or act as a
// glob.
func ValidSessionID(id string) bool {
	// By hand rather than a package-level regexp: every muster command
	// would pay for compiling it at start-up.
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// Finder locates rollout files under a Codex home and remembers them.
type Finder struct {
	Home string // $CODEX_HOME

	mu    sync.Mutex
	cache map[string]string
}

// Find returns the rollout path of a session.
func (f *Finder) Find(sessionID string) (string, error) {
	if !ValidSessionID(sessionID) {
		return "", fmt.Errorf("find rollout: invalid session id %q", sessionID)
	}
	f.mu.Lock()
	p, ok := f.cache[sessionID]
	f.mu.Unlock()
	if ok {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := findRollout(filepath.Join(f.Home, "sessions"), "-"+sessionID+".jsonl", 0)
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", fmt.Errorf("find rollout of %s: %w", sessionID, ErrNoRollout)
	}
	f.mu.Lock()
	if f.cache == nil {
		f.cache = map[string]string{}
	}
	f.cache[sessionID] = p
	f.mu.Unlock()
	return p, nil
}

// findRollout searches dir and up to three levels below it (YYYY/MM/DD),
// newest names first, for rollout-*<suffix>.
func findRollout(dir, suffix string, depth int) (string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find rollout: %w", err)
	}
	slices.Reverse(ents)
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, "rollout-") && strings.HasSuffix(n, suffix) {
			return filepath.Join(dir, n), nil
		}
	}
	if depth >= 3 {
		return "", nil
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if p, err := findRollout(filepath.Join(dir, e.Name()), suffix, depth+1); p != "" || err != nil {
			return p, err
		}
	}
	return "", nil
}

// Meta is what routing needs from a rollout's session_meta record.
type Meta struct {
	ID           string
	CWD          string
	Originator   string
	Source       string // "cli", "vscode", "exec", "mcp", …; "subagent" when it is an object naming one
	ThreadSource string
}

// Interactive reports whether the session is an interactive Codex TUI
// session started by the user: originator codex-tui (any source but exec,
// mcp or a sub-agent), or the older codex_cli_rs with source cli. codex exec
// (originator codex_exec, source exec), sub-agent threads (source object,
// thread_source other than user), MCP servers and desktop or IDE app threads
// (other originators) do not qualify.
func (m Meta) Interactive() bool {
	switch m.Source {
	case "exec", "mcp", "subagent":
		return false
	}
	if m.ThreadSource != "" && m.ThreadSource != "user" {
		return false
	}
	switch m.Originator {
	case "codex-tui":
		return true
	case "codex_cli_rs":
		return m.Source == "cli"
	}
	return false
}

// maxMetaLine bounds the session_meta line (it carries the base
// instructions, tens of KiB).
const maxMetaLine = 4 << 20

// ReadMeta reads the session_meta record among the first lines of a rollout.
func ReadMeta(path string) (Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return Meta{}, fmt.Errorf("read rollout meta: %w", err)
	}
	defer f.Close()
	return parseMeta(f)
}

func parseMeta(r io.Reader) (Meta, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for range 16 {
		line, err := readLine(br, maxMetaLine)
		if len(line) > 0 {
			var rec struct {
				Type    string `json:"type"`
				Payload struct {
					ID           string          `json:"id"`
					SessionID    string          `json:"session_id"`
					CWD          string          `json:"cwd"`
					Originator   string          `json:"originator"`
					Source       json.RawMessage `json:"source"`
					ThreadSource string          `json:"thread_source"`
				} `json:"payload"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Type == "session_meta" {
				p := rec.Payload
				m := Meta{ID: p.ID, CWD: p.CWD, Originator: p.Originator, ThreadSource: p.ThreadSource}
				if m.ID == "" {
					m.ID = p.SessionID
				}
				var s string
				switch {
				case len(p.Source) == 0 || string(p.Source) == "null":
				case json.Unmarshal(p.Source, &s) == nil:
					m.Source = s
				default:
					var obj map[string]json.RawMessage
					if json.Unmarshal(p.Source, &obj) == nil {
						if _, ok := obj["subagent"]; ok {
							m.Source = "subagent"
						} else {
							m.Source = "other"
						}
					} else {
						m.Source = "other"
					}
				}
				if m.CWD == "" {
					return Meta{}, errors.New("read rollout meta: session_meta has no cwd")
				}
				return m, nil
			}
		}
		if err != nil {
			break
		}
	}
	return Meta{}, errors.New("read rollout meta: no session_meta record")
}

// readLine reads one line of at most max bytes; longer lines are skipped.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) <= max {
			buf = append(buf, chunk...)
		} else {
			buf = buf[:0]
			max = -1 // too long: keep reading to its end, return nothing
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if max < 0 {
			return nil, err
		}
		return buf, err
	}
}
