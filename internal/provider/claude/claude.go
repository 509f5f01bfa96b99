package claude

import (
	"context"
	"fmt"
	"io"
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
	n, err := p.read(ctx, f)
	if err != nil {
		return nil, err
	}
	if opts.Item != nil && opts.Inherit != nil && !opts.SummaryOnly && p.forgotten != p.inheritedItems() {
		// A later record moved the fork point back after items were
		// forgotten (a record naming the file's own session as the
		// original: bytes Claude Code never writes, but a parse must not
		// lose items for them): stream them all again, the inherited
		// ones marked, from the bytes read.
		opts.Inherit()
		replay := p.inheritedItems()
		opts.Inherit = nil
		p = newParser(env, path, opts)
		p.replay = replay
		if _, err := p.read(ctx, io.NewSectionReader(f, 0, n)); err != nil {
			return nil, err
		}
	}
	t := p.finish()
	if t == nil {
		return nil, nil
	}
	return []*transcript.Transcript{t}, nil
}

// read parses every line of r, the last one unterminated too, and
// returns the bytes read.
func (p *parser) read(ctx context.Context, r io.Reader) (int64, error) {
	sc := transcript.NewLineScanner(r, 0)
	for sc.Scan() {
		if sc.Line()%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return sc.Offset(), err
			}
		}
		if sc.TooLong() {
			p.warnf(sc.Line(), "longer than %d bytes; skipped", transcript.DefaultMaxLine)
			continue
		}
		p.line(sc.Line(), sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return sc.Offset(), fmt.Errorf("read claude transcript: %w", err)
	}
	return sc.Offset(), nil
}

// Follow implements transcript.Follower: Claude Code only appends to a
// transcript. Items are streamed as their lines are read; but a fork's
// file shows that it is one only at its first copied reply (its
// requestSessionId), after the copied prompt before it was streamed as
// the fork's own. So a Feed that ends with the fork point elsewhere than
// where the items streamed so far put it takes them back (opts.Inherit)
// and reads the file again from its start, streaming every item again
// with the inherited ones marked, as transcript.Follow says. --fork-session
// writes the copies when the fork starts, before its first own record, so
// that happens once in a fork's life; never for other files.
func (*Source) Follow(env transcript.Env, path string, opts transcript.ParseOptions) transcript.Follow {
	f := &follow{env: env, path: path, opts: opts}
	f.reset(0)
	return f
}

type follow struct {
	env   transcript.Env
	path  string
	opts  transcript.ParseOptions // the caller's
	p     *parser
	lines int
	fed   int64 // bytes consumed from the file's start
	// rebuilds counts the reads of the file from its start after the
	// first (a test reads it).
	rebuilds int
}

// reset starts the parse afresh, streaming the first replay items marked
// Inherited.
func (f *follow) reset(replay int) {
	popts := f.opts
	popts.Inherit = nil // Feed takes items back itself
	f.p = newParser(f.env, f.path, popts)
	f.p.replay = replay
	f.lines, f.fed = 0, 0
}

// Feed implements transcript.Follow.
func (f *follow) Feed(ctx context.Context, r io.Reader) (int64, error) {
	n, err := f.feed(ctx, r)
	if err != nil || f.opts.Item == nil || f.opts.SummaryOnly {
		return n, err
	}
	inherited := f.p.inheritedItems()
	if inherited == f.p.replay {
		return n, nil
	}
	f.rebuilds++
	fed := f.fed
	ra, ok := r.(io.ReaderAt)
	if !ok {
		fd, err := transcript.OpenFile(f.path)
		if err != nil {
			return n, fmt.Errorf("read claude transcript again: %w", err)
		}
		defer fd.Close()
		ra = fd
	}
	if f.opts.Inherit != nil {
		f.opts.Inherit()
	}
	f.reset(inherited)
	m, err := f.feed(ctx, io.NewSectionReader(ra, 0, fed))
	if err != nil {
		return n, err
	}
	if m != fed {
		return n, fmt.Errorf("read claude transcript again: %d of %d bytes", m, fed)
	}
	return n, nil
}

// feed parses the complete lines of r.
func (f *follow) feed(ctx context.Context, r io.Reader) (int64, error) {
	n, err := transcript.FeedLines(ctx, r, &f.lines, func(n int, raw []byte, tooLong bool) {
		if tooLong {
			f.p.warnf(n, "longer than %d bytes; skipped", transcript.DefaultMaxLine)
			return
		}
		f.p.line(n, raw)
	})
	f.fed += n
	if err != nil {
		return n, fmt.Errorf("read claude transcript: %w", err)
	}
	return n, nil
}

// Transcripts implements transcript.Follow.
func (f *follow) Transcripts() []*transcript.Transcript {
	if t := f.p.snapshot(); t != nil {
		return []*transcript.Transcript{t}
	}
	return nil
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
