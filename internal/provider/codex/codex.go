package codex

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/provider/codex/codexhook"
	"github.com/musterhq/muster/internal/transcript"
)

// Name is the provider name used in history and session references.
const Name = codexhook.Name

// Source is the Codex transcript source.
type Source struct{}

// New returns the Codex source.
func New() transcript.Source { return &Source{} }

// Provider implements transcript.Source.
func (*Source) Provider() string { return Name }

// Home is $CODEX_HOME, or ~/.codex.
func Home(env transcript.Env) string {
	d, _ := checkedHome(env)
	return d
}

// checkedHome is Home, with an error when it is not absolute.
func checkedHome(env transcript.Env) (string, error) {
	return env.CheckedDir("CODEX_HOME", "", ".codex")
}

// Roots implements transcript.Source.
func (*Source) Roots(env transcript.Env) []string {
	home := Home(env)
	if home == "" {
		return nil
	}
	return []string{filepath.Join(home, "sessions"), filepath.Join(home, "archived_sessions")}
}

// Discover implements transcript.Source: rollout-*.jsonl (and the
// TypeScript CLI's rollout-*.json) under sessions/ and archived_sessions/,
// flat or in YYYY/MM/DD folders.
func (s *Source) Discover(ctx context.Context, env transcript.Env) ([]transcript.File, error) {
	var files []transcript.File
	for _, root := range s.Roots(env) {
		var err error
		if files, err = walk(ctx, files, root, 0); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// walk collects rollouts under dir, at most three folder levels down.
func walk(ctx context.Context, files []transcript.File, dir string, depth int) ([]transcript.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return files, nil // missing or unreadable: nothing here
	}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		if e.IsDir() {
			if depth < 3 {
				if files, err = walk(ctx, files, path, depth+1); err != nil {
					return nil, err
				}
			}
			continue
		}
		if !IsRollout(name) {
			continue
		}
		if f, ok := transcript.Candidate(path, e); ok {
			files = append(files, f)
		}
	}
	return files, nil
}

// IsRollout reports whether a file name is a rollout's.
func IsRollout(name string) bool {
	return strings.HasPrefix(name, "rollout-") && (strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".json"))
}

// Parse implements transcript.Source.
func (*Source) Parse(ctx context.Context, env transcript.Env, path string, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	f, err := transcript.OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("open codex rollout: %w", err)
	}
	defer f.Close()
	jsonl := !strings.HasSuffix(path, ".json")
	if jsonl && opts.Item != nil && !opts.SummaryOnly {
		// Streamed, with the follow's bounded holding of items whose
		// fate is decided late.
		fl := newFollow(path, opts)
		fl.whole = true
		if _, err := fl.Feed(ctx, f); err != nil {
			return nil, err
		}
		return fl.Transcripts(), nil
	}
	p := newParser(path, opts)
	if jsonl {
		var lines int
		if _, err := scanRollout(ctx, p, f, &lines, true); err != nil {
			return nil, err
		}
	} else if err := p.legacyDocument(f); err != nil {
		return nil, err
	}
	t := p.finish()
	if t == nil {
		return nil, nil
	}
	return []*transcript.Transcript{t}, nil
}

// scanRollout feeds p the lines of a JSONL rollout, numbered after
// *lines (which it advances), and has the original's history a fork
// points at read as soon as its session_meta is. A last line without its
// newline is parsed when whole is set (a file read to its end), left
// otherwise (a file an agent may still be writing). It returns the bytes
// of the lines parsed.
func scanRollout(ctx context.Context, p *parser, r io.Reader, lines *int, whole bool) (int64, error) {
	sc := transcript.NewLineScanner(r, 0)
	var consumed int64
	for sc.Scan() && (whole || sc.Terminated()) {
		consumed = sc.Offset()
		*lines++
		if *lines%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return consumed, err
			}
		}
		if sc.TooLong() {
			p.warnf(*lines, "longer than %d bytes; skipped", transcript.DefaultMaxLine)
		} else {
			p.line(*lines, sc.Bytes())
		}
		if p.historyBase > 0 && !p.baseRead {
			p.baseRead = true
			if err := p.readHistoryBase(ctx); err != nil {
				return consumed, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return consumed, fmt.Errorf("read codex rollout: %w", err)
	}
	return consumed, nil
}

// SessionMeta is what a rollout's first record says about the session.
type SessionMeta struct {
	ID  string
	CWD string
	// Interactive reports a session a user started in the TUI, as opposed
	// to codex exec, an MCP server, a sub-agent or another client.
	Interactive bool
	Originator  string
	// Source is session_meta.source; for an object ({"subagent": …}) its
	// first key.
	Source     string
	ParentID   string
	CLIVersion string
	StartedAt  time.Time
}

// metaLines bounds how far ReadSessionMeta looks for session_meta.
const metaLines = 16

// ReadSessionMeta reads just the session_meta record at the top of a
// rollout (or the legacy header), without parsing the rest.
func ReadSessionMeta(path string) (SessionMeta, error) {
	m, _, err := readMeta(path)
	return m, err
}

// metaExtra is what routing reads of session_meta beside SessionMeta.
type metaExtra struct {
	threadSource string
	subagent     bool // source is an object with a "subagent" member
	otherSource  bool // source is neither a string, null nor a sub-agent
}

// readMeta is ReadSessionMeta, with the extra fields routing reads.
func readMeta(path string) (SessionMeta, metaExtra, error) {
	f, err := transcript.OpenFile(path)
	if err != nil {
		return SessionMeta{}, metaExtra{}, fmt.Errorf("read codex session meta: %w", err)
	}
	defer f.Close()
	if strings.HasSuffix(path, ".json") {
		p := newParser(path, transcript.ParseOptions{SummaryOnly: true})
		if err := p.legacyDocument(f); err != nil {
			return SessionMeta{}, metaExtra{}, err
		}
		if p.meta.ID == "" {
			return SessionMeta{}, metaExtra{}, fmt.Errorf("read codex session meta %s: no session id", path)
		}
		return p.meta, metaExtra{}, nil
	}
	return scanMeta(f, path)
}

// scanMeta finds session_meta (or the legacy header) among the first lines
// of a JSON-lines rollout.
func scanMeta(r io.Reader, path string) (SessionMeta, metaExtra, error) {
	sc := transcript.NewLineScanner(r, 0)
	var top []transcript.Member
	for sc.Scan() && sc.Line() <= metaLines {
		var ok bool
		line := bytes.TrimSpace(sc.Bytes())
		if top, ok = transcript.Members(line, top); !ok {
			continue
		}
		typ := transcript.Lookup(top, "type")
		switch {
		case transcript.StrEqual(typ, "session_meta"):
			payload, ok := transcript.Members(transcript.Lookup(top, "payload"), nil)
			if !ok {
				continue
			}
			m, x := metaFrom(payload, parseTime(transcript.Lookup(top, "timestamp")))
			return m, x, nil
		case typ == nil && transcript.Lookup(top, "payload") == nil && transcript.IsString(transcript.Lookup(top, "id")):
			m, x := metaFrom(top, time.Time{})
			return m, x, nil
		}
	}
	if err := sc.Err(); err != nil {
		return SessionMeta{}, metaExtra{}, fmt.Errorf("read codex session meta: %w", err)
	}
	return SessionMeta{}, metaExtra{}, fmt.Errorf("read codex session meta %s: no session_meta record in the first %d lines", path, metaLines)
}

func metaOnly(m SessionMeta, _ metaExtra) SessionMeta { return m }

// metaFrom reads a session_meta payload (or a legacy header).
func metaFrom(payload []transcript.Member, recordTime time.Time) (SessionMeta, metaExtra) {
	m := SessionMeta{
		ID:         transcript.Str(transcript.Lookup(payload, "id")),
		CWD:        transcript.Str(transcript.Lookup(payload, "cwd")),
		Originator: transcript.Str(transcript.Lookup(payload, "originator")),
		CLIVersion: transcript.Str(transcript.Lookup(payload, "cli_version")),
		StartedAt:  parseTime(transcript.Lookup(payload, "timestamp")),
	}
	if m.ID == "" {
		m.ID = transcript.Str(transcript.Lookup(payload, "session_id"))
	}
	if m.StartedAt.IsZero() {
		m.StartedAt = recordTime
	}
	x := metaExtra{threadSource: transcript.Str(transcript.Lookup(payload, "thread_source"))}
	switch src := transcript.Lookup(payload, "source"); {
	case transcript.IsString(src):
		m.Source = transcript.Str(src)
	case len(src) > 0 && src[0] == '{':
		obj, _ := transcript.Members(src, nil)
		if len(obj) > 0 {
			m.Source = transcript.Str(append(append([]byte{'"'}, obj[0].Key...), '"'))
		}
		if sub := transcript.Lookup(obj, "subagent"); sub != nil {
			x.subagent = true
			m.ParentID = findString(sub, "parent_thread_id", 4)
		} else {
			x.otherSource = true
		}
	case len(src) > 0 && string(src) != "null":
		x.otherSource = true
	}
	m.Interactive = isInteractive(m.Originator, m.Source, x.subagent)
	return m, x
}

// isInteractive applies the rule in the package doc.
func isInteractive(originator, source string, subagent bool) bool {
	if subagent {
		return false
	}
	switch strings.ToLower(source) {
	case "exec", "mcp", "subagent":
		return false
	}
	switch strings.ReplaceAll(strings.ToLower(originator), "-", "_") {
	case "codex_tui", "codex_cli_rs":
		return true
	case "":
		return strings.EqualFold(source, "cli")
	}
	return false
}

// findString looks for a string member named key in raw, depth levels
// down at most.
func findString(raw []byte, key string, depth int) string {
	if depth < 0 || len(raw) == 0 || raw[0] != '{' {
		return ""
	}
	ms, ok := transcript.Members(raw, nil)
	if !ok {
		return ""
	}
	if v := transcript.Lookup(ms, key); transcript.IsString(v) {
		return transcript.Str(v)
	}
	for _, m := range ms {
		if s := findString(m.Value, key, depth-1); s != "" {
			return s
		}
	}
	return ""
}

// maxDocument bounds a TypeScript-era rollout, which is read whole.
const maxDocument = 256 << 20

// legacyDocument reads a TypeScript CLI rollout: {"session": {id,
// timestamp, instructions}, "items": [response items]}.
func (p *parser) legacyDocument(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read codex rollout: %w", err)
	}
	if fi.Size() > maxDocument {
		p.t.Warnings = append(p.t.Warnings, fmt.Sprintf("document larger than %d bytes; not read", maxDocument))
		return nil
	}
	data, err := readAll(f, fi.Size())
	if err != nil {
		return fmt.Errorf("read codex rollout: %w", err)
	}
	data = bytes.TrimSpace(data)
	top, ok := transcript.Members(data, nil)
	if !ok {
		if transcript.ValidJSON(data) {
			p.t.Warnings = append(p.t.Warnings, "document is not a JSON object")
		} else {
			p.t.Warnings = append(p.t.Warnings, "document is malformed JSON")
		}
		return nil
	}
	if sess, ok := transcript.Members(transcript.Lookup(top, "session"), nil); ok {
		p.setMeta(metaOnly(metaFrom(sess, time.Time{})))
	}
	items, ok := transcript.Elements(transcript.Lookup(top, "items"), nil)
	if !ok {
		return nil
	}
	for i, it := range items {
		ms, ok := transcript.Members(it, nil)
		if !ok {
			p.t.Warnings = append(p.t.Warnings, fmt.Sprintf("item %d: not a JSON object; skipped", i+1))
			continue
		}
		p.responseItem(ms, time.Time{})
	}
	return nil
}

func readAll(f *os.File, size int64) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(size) + 1)
	_, err := buf.ReadFrom(f)
	return buf.Bytes(), err
}
