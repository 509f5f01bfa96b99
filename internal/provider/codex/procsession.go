package codex

import (
	"path/filepath"
	"strings"

	"github.com/musterhq/muster/internal/procfs"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

var _ provider.ProcessSessionReader = Provider{}

// ProcessSession implements provider.ProcessSessionReader: the session of
// the rollout that process pid holds open under $CODEX_HOME/sessions. The
// TUI run with --no-daemon holds its session's rollout open while it runs
// (routing rule 1 relies on the same); in daemon mode only the shared
// app-server does, for every pane, and it is never asked (its rollouts
// prove nothing about a pane). Linux only: elsewhere there is no
// /proc/PID/fd and the answer is "".
func (Provider) ProcessSession(env transcript.Env, pid int) string {
	home := Home(env)
	if home == "" || pid <= 0 {
		return ""
	}
	sessions := filepath.Join(home, "sessions") + string(filepath.Separator)
	files, err := procfs.FS{}.OpenFiles(pid)
	if err != nil {
		return ""
	}
	for _, target := range files {
		if !strings.HasPrefix(target, sessions) {
			continue
		}
		if id := rolloutID(filepath.Base(target)); id != "" {
			return id
		}
	}
	return ""
}

// rolloutID returns the session id in a rollout's file name,
// rollout-<YYYY-MM-DDTHH-MM-SS>-<id>.jsonl; "" when the name is not one.
func rolloutID(name string) string {
	if !IsRollout(name) {
		return ""
	}
	stem := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "rollout-"), ".jsonl"), ".json")
	const stamp = len("2006-01-02T15-04-05-")
	if len(stem) <= stamp || stem[10] != 'T' || stem[stamp-1] != '-' {
		return ""
	}
	return stem[stamp:]
}
