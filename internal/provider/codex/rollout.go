package codex

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// This is the one lookup of a session's rollout by id, for routing
// (hookroute), resuming (HasTranscript) and native turn reading.

// isRolloutOf reports whether a file name is the rollout of session id:
// rollout-<time>-<id>.jsonl (or the TypeScript CLI's .json).
func isRolloutOf(name, id string) bool {
	if !IsRollout(name) {
		return false
	}
	stem := strings.TrimSuffix(strings.TrimSuffix(name, ".jsonl"), ".json")
	return strings.HasSuffix(stem, "-"+id)
}

// FindRollout returns the rollout of session id under $CODEX_HOME/sessions,
// searching every folder down to YYYY/MM/DD, newest names first; "" when
// there is none (Codex writes it with the first prompt).
func FindRollout(env transcript.Env, id string) (string, error) {
	home := Home(env)
	if home == "" || id == "" {
		return "", nil
	}
	return findRollout(filepath.Join(home, "sessions"), id, 0)
}

func findRollout(dir, id string, depth int) (string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find rollout: %w", err)
	}
	slices.Reverse(ents)
	for _, e := range ents {
		if e.Type().IsRegular() && isRolloutOf(e.Name(), id) {
			return filepath.Join(dir, e.Name()), nil
		}
	}
	if depth >= 3 {
		return "", nil
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if p, err := findRollout(filepath.Join(dir, e.Name()), id, depth+1); p != "" || err != nil {
			return p, err
		}
	}
	return "", nil
}

// recentDirs are the folders a new rollout appears in: today's and
// yesterday's date folders (local time of now) and sessions/ itself.
func recentDirs(env transcript.Env, now time.Time) []string {
	home := Home(env)
	if home == "" {
		return nil
	}
	sessions := filepath.Join(home, "sessions")
	var dirs []string
	for _, d := range []time.Time{now.Local(), now.Local().Add(-24 * time.Hour)} {
		dir := filepath.Join(sessions, d.Format("2006"), d.Format("01"), d.Format("02"))
		if len(dirs) == 0 || dirs[len(dirs)-1] != dir {
			dirs = append(dirs, dir)
		}
	}
	return append(dirs, sessions)
}

// FindRecentRollout is FindRollout limited to recentDirs: three directory
// reads, what a poll can afford.
func FindRecentRollout(env transcript.Env, id string, now time.Time) string {
	if id == "" {
		return ""
	}
	for _, dir := range recentDirs(env, now) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if isRolloutOf(e.Name(), id) && e.Type().IsRegular() {
				return filepath.Join(dir, e.Name())
			}
		}
	}
	return ""
}
