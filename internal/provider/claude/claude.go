package claude

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/musterhq/muster/internal/provider/claude/claudehook"
	"github.com/musterhq/muster/internal/transcript"
)

// Name is the provider name used in history and session references.
const Name = claudehook.Name

// Source is the Claude Code transcript source.
type Source struct{}

// New returns the Claude Code source.
func New() transcript.Source { return &Source{} }

// Provider implements transcript.Source.
func (*Source) Provider() string { return Name }

// ConfigDir is $CLAUDE_CONFIG_DIR, or ~/.claude.
func ConfigDir(env transcript.Env) string {
	d, _ := configDir(env)
	return d
}

// configDir is ConfigDir, with an error when it is not absolute.
func configDir(env transcript.Env) (string, error) {
	return env.CheckedDir("CLAUDE_CONFIG_DIR", "", ".claude")
}

// ProjectsDir is where the transcripts are.
func ProjectsDir(env transcript.Env) string {
	if dir := ConfigDir(env); dir != "" {
		return filepath.Join(dir, "projects")
	}
	return ""
}

// Roots implements transcript.Source.
func (*Source) Roots(env transcript.Env) []string {
	if dir := ProjectsDir(env); dir != "" {
		return []string{dir}
	}
	return nil
}

// Discover implements transcript.Source: projects/<p>/*.jsonl and the
// agent-*.jsonl files under projects/<p>/<session>/subagents/.
func (*Source) Discover(ctx context.Context, env transcript.Env) ([]transcript.File, error) {
	root := ProjectsDir(env)
	if root == "" {
		return nil, nil
	}
	projects, err := os.ReadDir(root)
	if err != nil {
		return nil, nil // a missing or unreadable root has no sessions
	}
	var files []transcript.File
	for _, p := range projects {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dir := filepath.Join(root, p.Name())
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			path := filepath.Join(dir, name)
			switch {
			case e.IsDir():
				files = appendSubagents(ctx, files, filepath.Join(path, "subagents"), 0)
			case strings.HasSuffix(name, ".jsonl"):
				if f, ok := transcript.Candidate(path, e); ok {
					files = append(files, f)
				}
			}
		}
	}
	return files, nil
}

// appendSubagents adds agent-*.jsonl under dir, down to workflow folders.
func appendSubagents(ctx context.Context, files []transcript.File, dir string, depth int) []transcript.File {
	if depth > 3 || ctx.Err() != nil {
		return files
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return files
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if e.IsDir() {
			files = appendSubagents(ctx, files, path, depth+1)
			continue
		}
		if name := e.Name(); strings.HasPrefix(name, "agent-") && strings.HasSuffix(name, ".jsonl") {
			if f, ok := transcript.Candidate(path, e); ok {
				files = append(files, f)
			}
		}
	}
	return files
}

// Parse implements transcript.Source.
func (*Source) Parse(ctx context.Context, env transcript.Env, path string, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	f, err := transcript.OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("open claude transcript: %w", err)
	}
	defer f.Close()
	p := newParser(env, path, opts)
	sc := transcript.NewLineScanner(f, 0)
	for sc.Scan() {
		if sc.Line()%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if sc.TooLong() {
			p.warnf(sc.Line(), "longer than %d bytes; skipped", transcript.DefaultMaxLine)
			continue
		}
		p.line(sc.Line(), sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read claude transcript: %w", err)
	}
	t := p.finish()
	if t == nil {
		return nil, nil
	}
	return []*transcript.Transcript{t}, nil
}

// Follow implements transcript.Follower: Claude Code only appends to a
// transcript.
func (*Source) Follow(env transcript.Env, path string, opts transcript.ParseOptions) transcript.Follow {
	p := newParser(env, path, opts)
	return &transcript.LineFollow{
		What: "claude transcript",
		Line: p.line,
		Skipped: func(n int) {
			p.warnf(n, "longer than %d bytes; skipped", transcript.DefaultMaxLine)
		},
		Snapshot: func() []*transcript.Transcript {
			if t := p.snapshot(); t != nil {
				return []*transcript.Transcript{t}
			}
			return nil
		},
	}
}

// subagentInfo reports whether path is a sub-agent transcript, and its
// parent session id when the layout says so.
func subagentInfo(path string) (agentID, parentID string, ok bool) {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if !strings.HasPrefix(base, "agent-") {
		return "", "", false
	}
	agentID = strings.TrimPrefix(base, "agent-")
	// <session>/subagents/[workflows/<wf>/]agent-<id>.jsonl
	dir := filepath.Dir(path)
	for range 4 {
		if filepath.Base(dir) == "subagents" {
			return agentID, filepath.Base(filepath.Dir(dir)), true
		}
		dir = filepath.Dir(dir)
	}
	return agentID, "", true
}

// readMeta returns the description of a sub-agent's agent-<id>.meta.json
// and the id of the parent's Task/Agent call that started it (toolUseId).
func readMeta(path string) (description, callID string) {
	meta := strings.TrimSuffix(path, ".jsonl") + ".meta.json"
	data, err := transcript.ReadFile(meta, 1<<20)
	if err != nil {
		return "", ""
	}
	return metaFields(data)
}
