package realcli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// hookLogger is the hook command the logger installs. It stores the
// payload from stdin, and the agent-related variables of its environment,
// in one file per call named <unix ns>-<pid>-<event>.json, renamed into
// place whole so that a reader never sees half a payload. It prints
// nothing: Gemini CLI takes any stdout as the hook's JSON answer.
const hookLogger = `#!/bin/sh
# usage: hooklog DIR EVENT
dir=$1 ev=$2
f="$dir/$(date +%s%N)-$$-$ev"
cat > "$f.tmp" || exit 0
env | grep -E '^(CLAUDE|CODEX|GEMINI|TMUX|MUSTER)' | grep -vE '^[^=]*(KEY|TOKEN)' > "$f.env.tmp"
mv "$f.env.tmp" "$f.env"
mv "$f.tmp" "$f.json"
exit 0
`

func writeHookLogger(path string) error {
	return writeFile(path, []byte(hookLogger), 0o755)
}

// hookCommand is the command line a CLI runs for event ev.
func (s *Setup) hookCommand(ev string) string {
	return shellQuote(filepath.Join(s.Root, "bin", "hooklog")) + " " + shellQuote(s.HookDir) + " " + ev
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Hook is one hook call the logger recorded.
type Hook struct {
	// Event is the event the hook was installed for.
	Event string
	// Time is when the hook process started writing.
	Time time.Time
	// PID is the hook process's id.
	PID int
	// Payload is the JSON the CLI sent on the hook's stdin.
	Payload json.RawMessage
	// Env holds the CLAUDE*, CODEX*, GEMINI*, TMUX* and MUSTER* variables
	// the hook process saw, except those naming a KEY or TOKEN.
	Env map[string]string
}

// Field returns the string field name of the payload's top-level object,
// or "" when it has none.
func (h Hook) Field(name string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(h.Payload, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[name], &s) != nil {
		return ""
	}
	return s
}

// Hooks returns the hook calls recorded so far, oldest first. It fails when
// the logger was not installed or a record is not what it writes.
func (s *Setup) Hooks() ([]Hook, error) {
	if s.HookDir == "" {
		return nil, fmt.Errorf("read hooks: the hook logger is not installed (Options.HookLog)")
	}
	entries, err := os.ReadDir(s.HookDir)
	if err != nil {
		return nil, fmt.Errorf("read hooks: %w", err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	// Names start with 19-digit nanosecond times, so they sort by time.
	sort.Strings(names)
	var hooks []Hook
	for _, name := range names {
		h, err := parseHookName(strings.TrimSuffix(name, ".json"))
		if err != nil {
			return nil, fmt.Errorf("read hooks: %w", err)
		}
		base := filepath.Join(s.HookDir, strings.TrimSuffix(name, ".json"))
		if h.Payload, err = os.ReadFile(base + ".json"); err != nil {
			return nil, fmt.Errorf("read hooks: %w", err)
		}
		if !json.Valid(h.Payload) {
			return nil, fmt.Errorf("read hooks: %s: payload is not JSON: %q", name, h.Payload)
		}
		env, err := os.ReadFile(base + ".env")
		if err != nil {
			return nil, fmt.Errorf("read hooks: %w", err)
		}
		h.Env = map[string]string{}
		for _, line := range strings.Split(string(env), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				h.Env[k] = v
			}
		}
		hooks = append(hooks, h)
	}
	return hooks, nil
}

// parseHookName reads "<unix ns>-<pid>-<event>".
func parseHookName(name string) (Hook, error) {
	parts := strings.SplitN(name, "-", 3)
	if len(parts) != 3 {
		return Hook{}, fmt.Errorf("hook record %q is not <ns>-<pid>-<event>", name)
	}
	ns, err1 := strconv.ParseInt(parts[0], 10, 64)
	pid, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || parts[2] == "" {
		return Hook{}, fmt.Errorf("hook record %q is not <ns>-<pid>-<event>", name)
	}
	return Hook{Event: parts[2], Time: time.Unix(0, ns), PID: pid}, nil
}

// Events returns the event names of hooks, in order.
func Events(hooks []Hook) []string {
	var out []string
	for _, h := range hooks {
		out = append(out, h.Event)
	}
	return out
}
