package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/musterhq/muster/internal/transcript"
)

// ErrNoSession means a reference matched no session; suggest `muster history`.
var ErrNoSession = errors.New("no such session")

// AmbiguousError means an id prefix (or a file holding several sessions)
// matched more than one session; Candidates are PROVIDER:ID references.
type AmbiguousError struct {
	Ref        string
	Candidates []string
	More       bool // more candidates than listed
}

func (e *AmbiguousError) Error() string {
	more := ""
	if e.More {
		more = ", …"
	}
	return fmt.Sprintf("session %q is ambiguous: %s%s", e.Ref, strings.Join(e.Candidates, ", "), more)
}

// Ref is a parsed SESSION argument.
type Ref struct {
	// Provider is set by the PROVIDER:… form.
	Provider string
	// ID is a native id or a unique prefix of one; empty for paths.
	ID string
	// Path is set for path references (absolute once resolved).
	Path string
}

// ParseRef parses a SESSION argument: PROVIDER:ID, PROVIDER:PATH, a path
// (anything with a slash, or starting with . or ~), or a native id or
// unique prefix of one. providers are the known provider names.
func ParseRef(s string, providers []string) (Ref, error) {
	if strings.TrimSpace(s) == "" {
		return Ref{}, errors.New("empty session reference")
	}
	if len(s) > 4096 {
		return Ref{}, errors.New("session reference is too long")
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return Ref{}, fmt.Errorf("session reference %q has a control or invalid character", s)
		}
	}
	var ref Ref
	rest := s
	if p, r, ok := strings.Cut(s, ":"); ok && isWord(p) {
		if !slices.Contains(providers, strings.ToLower(p)) {
			return Ref{}, fmt.Errorf("unknown provider %q in %q (known: %s)", p, s, strings.Join(providers, ", "))
		}
		ref.Provider = strings.ToLower(p)
		rest = r
		if rest == "" {
			return Ref{}, fmt.Errorf("session reference %q has no id after the provider", s)
		}
	}
	if looksLikePath(rest) {
		ref.Path = rest
		return ref, nil
	}
	if strings.ContainsAny(rest, " \t") {
		return Ref{}, fmt.Errorf("session id %q has spaces", rest)
	}
	ref.ID = rest
	return ref, nil
}

func isWord(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '_')) {
			return false
		}
	}
	return true
}

func looksLikePath(s string) bool {
	return strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator) ||
		s == "." || s == ".." || strings.HasPrefix(s, "~") || strings.HasPrefix(s, "./")
}

// Resolved is a session reference resolved to one session and its source.
type Resolved struct {
	Session transcript.Session
	Source  transcript.Source
}

// Resolve finds the session ref names. Refresh the index first for id
// references; path references work without the index.
func (x *Index) Resolve(ctx context.Context, ref string, sources []transcript.Source, env transcript.Env) (Resolved, error) {
	var names []string
	for _, s := range sources {
		names = append(names, s.Provider())
	}
	r, err := ParseRef(ref, names)
	if err != nil {
		return Resolved{}, err
	}
	if r.Path != "" {
		return x.resolvePath(ctx, ref, r, sources, env)
	}
	exact, err := x.byID(ctx, r.Provider, r.ID, false)
	if err != nil {
		return Resolved{}, err
	}
	matches := exact
	if len(matches) == 0 {
		if matches, err = x.byID(ctx, r.Provider, r.ID, true); err != nil {
			return Resolved{}, err
		}
	}
	// The same conversation may sit in two files (an archived copy, a
	// Gemini resume's empty file); the newest that holds something said
	// wins (byID's order). Different conversations make the reference
	// ambiguous.
	distinct := uniqueRefs(matches)
	switch {
	case len(distinct) == 1:
		return x.resolved(matches[0], sources)
	case len(distinct) > 1:
		return Resolved{}, ambiguous(ref, distinct)
	}
	if r.Provider == "" {
		// A bare name that is a file in the working directory.
		if fi, err := os.Stat(r.ID); err == nil && fi.Mode().IsRegular() {
			r.Path = r.ID
			return x.resolvePath(ctx, ref, r, sources, env)
		}
	}
	return Resolved{}, fmt.Errorf("session %q: %w", ref, ErrNoSession)
}

func uniqueRefs(ss []transcript.Session) []string {
	var out []string
	for _, s := range ss {
		k := s.Provider + ":" + s.ID
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func ambiguous(ref string, cands []string) error {
	const show = 10
	e := &AmbiguousError{Ref: ref, Candidates: cands}
	if len(cands) > show {
		e.Candidates, e.More = cands[:show], true
	}
	return e
}

func (x *Index) resolved(s transcript.Session, sources []transcript.Source) (Resolved, error) {
	for _, src := range sources {
		if src.Provider() == s.Provider {
			return Resolved{Session: s, Source: src}, nil
		}
	}
	return Resolved{}, fmt.Errorf("session %s:%s: provider %q is not available in this build", s.Provider, s.ID, s.Provider)
}

func (x *Index) resolvePath(ctx context.Context, ref string, r Ref, sources []transcript.Source, env transcript.Env) (Resolved, error) {
	p := r.Path
	if p == "~" || strings.HasPrefix(p, "~/") {
		if env.Home == "" {
			return Resolved{}, fmt.Errorf("session %q: no home directory to expand ~", ref)
		}
		p = filepath.Join(env.Home, p[1:])
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return Resolved{}, fmt.Errorf("session %q: %w", ref, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Resolved{}, fmt.Errorf("session %q: no such file: %w", ref, ErrNoSession)
		}
		return Resolved{}, fmt.Errorf("session %q: %w", ref, err)
	}
	if fi.IsDir() {
		return Resolved{}, fmt.Errorf("session %q is a directory, not a transcript file", ref)
	}
	// The index knows files by the path their source reported.
	for _, cand := range candidatesPaths(abs) {
		ss, err := x.byPath(ctx, cand)
		if err != nil {
			return Resolved{}, err
		}
		ss = slices.DeleteFunc(ss, func(s transcript.Session) bool { return r.Provider != "" && s.Provider != r.Provider })
		if len(ss) == 1 {
			return x.resolved(ss[0], sources)
		}
		if len(ss) > 1 {
			return Resolved{}, ambiguous(ref, uniqueRefs(ss))
		}
	}
	return parsePath(ctx, ref, abs, r.Provider, sources, env)
}

func candidatesPaths(abs string) []string {
	out := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		out = append(out, real)
	}
	return out
}

// parsePath picks the source for a file the index does not know: one whose
// roots hold it, else whichever parser finds a conversation in it.
func parsePath(ctx context.Context, ref, abs, provider string, sources []transcript.Source, env transcript.Env) (Resolved, error) {
	var inRoot, others []transcript.Source
	for _, src := range sources {
		if provider != "" && src.Provider() != provider {
			continue
		}
		if underAny(abs, src.Roots(env)) {
			inRoot = append(inRoot, src)
		} else {
			others = append(others, src)
		}
	}
	type cand struct {
		src   transcript.Source
		ts    []*transcript.Transcript
		score int
	}
	var best *cand
	for i, group := range [][]transcript.Source{inRoot, others} {
		for _, src := range group {
			ts, err := safeParse(ctx, src, env, abs)
			if err != nil || len(ts) == 0 {
				continue
			}
			score := 0
			for _, t := range ts {
				score += t.PromptCount + t.ToolCallCount
				score -= min(len(t.Warnings), 1)
			}
			// A source whose roots hold the file wins outright; a forced
			// provider is taken whatever it finds.
			if i == 0 || provider != "" {
				score += 1 << 30
			}
			if best == nil || score > best.score {
				best = &cand{src, ts, score}
			}
		}
	}
	if best == nil || best.score <= 0 {
		return Resolved{}, fmt.Errorf("session %q: no provider recognises this file: %w", ref, ErrNoSession)
	}
	var sessions []transcript.Session
	for _, t := range best.ts {
		s := t.Session
		if s.Provider == "" {
			s.Provider = best.src.Provider()
		}
		if s.Path == "" {
			s.Path = abs
		}
		sessions = append(sessions, s)
	}
	if len(sessions) > 1 {
		return Resolved{}, ambiguous(ref, uniqueRefs(sessions))
	}
	return Resolved{Session: sessions[0], Source: best.src}, nil
}

func underAny(p string, roots []string) bool {
	for _, r := range roots {
		if r == "" {
			continue
		}
		rel, err := filepath.Rel(filepath.Clean(r), p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

func safeParse(ctx context.Context, src transcript.Source, env transcript.Env, path string) (ts []*transcript.Transcript, err error) {
	defer func() {
		if p := recover(); p != nil {
			ts, err = nil, fmt.Errorf("%s parser panicked: %v", src.Provider(), p)
		}
	}()
	return src.Parse(ctx, env, path, transcript.ParseOptions{SummaryOnly: true})
}

// Load parses the whole transcript of a resolved session.
func Load(ctx context.Context, r Resolved, env transcript.Env) (t *transcript.Transcript, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, fmt.Errorf("read %s: %s parser panicked: %v", r.Session.Path, r.Source.Provider(), p)
		}
	}()
	ts, err := r.Source.Parse(ctx, env, r.Session.Path, transcript.ParseOptions{})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", r.Session.Path, err)
	}
	var only *transcript.Transcript
	n := 0
	for _, t := range ts {
		if t == nil {
			continue
		}
		n++
		only = t
		if t.ID == r.Session.ID {
			return fill(t, r), nil
		}
	}
	if n == 1 && r.Session.ID == "" {
		return fill(only, r), nil
	}
	return nil, fmt.Errorf("session %s:%s is no longer in %s: %w", r.Session.Provider, r.Session.ID, r.Session.Path, ErrNoSession)
}

func fill(t *transcript.Transcript, r Resolved) *transcript.Transcript {
	if t.Provider == "" {
		t.Provider = r.Source.Provider()
	}
	if t.Path == "" {
		t.Path = r.Session.Path
	}
	return t
}
