package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/provider"
)

var _ provider.BackgroundLister = Provider{}

// Claude Code 2.1.332 runs `claude --bg` sessions under a supervisor of
// its own (`claude daemon run`, one per user, started on demand), keeps a
// directory per session under ~/.claude/jobs/<short id>/ (state.json,
// timeline.jsonl) and lists them with `claude agents --json` ("for
// scripts; works without a terminal"): pid, id (the short id), cwd, kind
// (background or interactive), startedAt (Unix ms), sessionId, name,
// status (busy, idle) and state (working, …). `claude attach <id>` opens
// one in a terminal, joining the running agent; `claude --resume` on its
// conversation would start a second one. Measured offline against the
// fake model (e2e/realcli TestMusterClaudeBackground).

// agentsTimeout bounds `claude agents --json` (about 1 s on a loaded
// 2-core box).
const agentsTimeout = 15 * time.Second

// BackgroundAgents implements provider.BackgroundLister with `claude
// agents --json`, run only when the config directory holds a job: the
// CLI costs about a second to start, and most users never ran --bg.
func (Provider) BackgroundAgents(ctx context.Context, env []string) ([]provider.BackgroundAgent, error) {
	bin, ok := agentsCLI(env)
	if !ok {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, agentsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "agents", "--json")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, fmt.Errorf("claude agents --json: %v %s", err, msg)
	}
	return parseAgents(out)
}

// MayHaveBackgroundAgents implements provider.BackgroundLister: the config
// directory holds a job and claude is on PATH.
func (Provider) MayHaveBackgroundAgents(env []string) bool {
	_, ok := agentsCLI(env)
	return ok
}

// agentsCLI is the claude to ask for env's background agents, when its
// config directory holds a job.
func agentsCLI(env []string) (string, bool) {
	get := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	dir := get("CLAUDE_CONFIG_DIR")
	if dir == "" {
		if get("HOME") == "" {
			return "", false
		}
		dir = filepath.Join(get("HOME"), ".claude")
	}
	if !hasJob(filepath.Join(dir, "jobs")) {
		return "", false
	}
	bin := lookPath("claude", get("PATH"))
	return bin, bin != ""
}

// hasJob reports whether jobs holds a session's directory.
func hasJob(jobs string) bool {
	entries, err := os.ReadDir(jobs)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() {
			return true
		}
	}
	return false
}

// lookPath finds name in path (a PATH value), as the shell of the user
// whose environment it is would.
func lookPath(name, path string) string {
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// parseAgents reads `claude agents --json`: its background sessions (the
// interactive ones run in terminals of their own, Muster's panes among
// them).
func parseAgents(out []byte) ([]provider.BackgroundAgent, error) {
	var rows []struct {
		PID       int    `json:"pid"`
		ID        string `json:"id"`
		CWD       string `json:"cwd"`
		Kind      string `json:"kind"`
		StartedAt int64  `json:"startedAt"`
		SessionID string `json:"sessionId"`
		Name      string `json:"name"`
		Status    string `json:"status"`
		State     string `json:"state"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		return nil, fmt.Errorf("claude agents --json: %w", err)
	}
	var agents []provider.BackgroundAgent
	for _, r := range rows {
		if r.Kind != "background" {
			continue
		}
		// The id ends up in a shell command (`muster new --cmd 'claude
		// attach ID'`, the dashboard's open): the CLI's are hex.
		if r.ID == "" || strings.HasPrefix(r.ID, "-") || strings.ContainsFunc(r.ID, func(c rune) bool {
			return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_')
		}) {
			return nil, errors.New("claude agents --json: a background session without a usable id")
		}
		a := provider.BackgroundAgent{
			ID: r.ID, SessionID: r.SessionID, Name: r.Name, CWD: r.CWD, PID: r.PID,
			Status: r.Status, State: r.State, Attach: []string{"claude", "attach", r.ID},
		}
		if r.StartedAt > 0 {
			a.StartedAt = time.UnixMilli(r.StartedAt)
		}
		agents = append(agents, a)
	}
	return agents, nil
}
