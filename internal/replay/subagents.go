package replay

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/musterhq/muster/internal/transcript"
)

// LoadSubagents reads the subagents a session started, where providers
// keep them beside its transcript: <session>/subagents/agent-*.jsonl and
// <session>/subagents/workflows/*/agent-*.jsonl, <session> being the
// transcript's path without its extension (Claude Code's layout). Each
// file is parsed by src and kept when it names t as its parent; files
// that cannot be read are skipped, since the parent's replay is still
// worth showing. The result is in start order.
func LoadSubagents(ctx context.Context, src transcript.Source, env transcript.Env, t *transcript.Transcript) []*transcript.Transcript {
	if src == nil || t.Path == "" || t.ID == "" {
		return nil
	}
	dir := filepath.Join(strings.TrimSuffix(t.Path, filepath.Ext(t.Path)), "subagents")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	var files []string
	for _, pat := range []string{filepath.Join(dir, "agent-*.jsonl"), filepath.Join(dir, "workflows", "*", "agent-*.jsonl")} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) > maxSubagents {
		files = files[:maxSubagents]
	}
	var out []*transcript.Transcript
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		ts, err := src.Parse(ctx, env, f, transcript.ParseOptions{})
		if err != nil {
			continue
		}
		for _, st := range ts {
			if st.ParentID == t.ID {
				out = append(out, st)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *transcript.Transcript) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}
