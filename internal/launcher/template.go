package launcher

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Placeholder marks where a resume template takes the native session id.
const Placeholder = "{session_id}"

// Validation errors. A *TemplateError wraps one of them (or a *SyntaxError
// wrapping ErrUnterminatedQuote and the like); match them with errors.Is.
var (
	// ErrEmptyCommand means the command runs no program: it is blank, only
	// comments, or only assignments, redirections or builtins such as
	// export.
	ErrEmptyCommand = errors.New("empty command")
	// ErrQuotedPlaceholder means {session_id} appears inside quotes or after
	// a backslash.
	ErrQuotedPlaceholder = errors.New("quoted placeholder")
	// ErrEmbeddedPlaceholder means {session_id} is part of a larger word, is
	// inside a substitution or touches an operator.
	ErrEmbeddedPlaceholder = errors.New("embedded placeholder")
	// ErrPlaceholderInComment means {session_id} appears inside a comment.
	ErrPlaceholderInComment = errors.New("placeholder in a comment")
	// ErrPlaceholderRedirect means {session_id} is a redirection target.
	ErrPlaceholderRedirect = errors.New("placeholder as a redirection target")
	// ErrPlaceholderInLaunch means the launch command contains {session_id};
	// it belongs in the resume command.
	ErrPlaceholderInLaunch = errors.New("placeholder in a launch command")
	// ErrComposition means a placeholder-free template is a shell composition,
	// so an appended id would attach to its last command only.
	ErrComposition = errors.New("shell composition")
	// ErrCompositionNeedsResume means the launch command is a shell
	// composition and no resume command was given.
	ErrCompositionNeedsResume = errors.New("shell composition without a resume command")
	// ErrPlaceholderCommand means {session_id} is in command position, where
	// the id would be run as a program.
	ErrPlaceholderCommand = errors.New("placeholder as the command name")
	// ErrHereDoc means the command uses a here-document.
	ErrHereDoc = errors.New("here-document")
	// ErrRedirectTarget means a redirection operator has no target word.
	ErrRedirectTarget = errors.New("redirection without a target")
	// ErrBadSessionID means the id cannot be passed to a program.
	ErrBadSessionID = errors.New("invalid session id")
)

// TemplateError is a refused launch command or resume template. Its message
// is one line naming the part, quoting the offending text and giving its
// byte offset.
type TemplateError struct {
	Part   string // "launch command" or "resume command"
	Err    error  // one of the Err* values of this package
	Offset int    // byte offset of Text in the command
	Text   string // the offending text
}

func (e *TemplateError) Error() string {
	var se *SyntaxError
	if errors.As(e.Err, &se) {
		return e.Part + ": " + se.Error()
	}
	const bare = "write {session_id} as a separate, unquoted word"
	switch e.Err {
	case ErrEmptyCommand:
		if e.Text != "" {
			return fmt.Sprintf("%s has no command to run (%q at byte %d)", e.Part, e.Text, e.Offset)
		}
		return e.Part + " is empty"
	case ErrQuotedPlaceholder:
		return fmt.Sprintf("%s: quoted placeholder in %q at byte %d; %s", e.Part, e.Text, e.Offset, bare)
	case ErrEmbeddedPlaceholder:
		return fmt.Sprintf("%s: placeholder embedded in %q at byte %d; %s", e.Part, e.Text, e.Offset, bare)
	case ErrPlaceholderInComment:
		return fmt.Sprintf("%s: placeholder inside the comment %q at byte %d", e.Part, e.Text, e.Offset)
	case ErrPlaceholderRedirect:
		return fmt.Sprintf("%s: placeholder %q at byte %d is a redirection target", e.Part, e.Text, e.Offset)
	case ErrPlaceholderInLaunch:
		return fmt.Sprintf("%s: %q at byte %d; the placeholder belongs in the resume command", e.Part, e.Text, e.Offset)
	case ErrComposition:
		return fmt.Sprintf("%s is a shell composition (%q at byte %d); mark where the id goes with {session_id}", e.Part, e.Text, e.Offset)
	case ErrCompositionNeedsResume:
		return fmt.Sprintf("%s is a shell composition (%q at byte %d), so the id cannot be appended; give an explicit resume command with {session_id} where the id goes: --resume-cmd, or resume in its [[launcher]] of config.toml", e.Part, e.Text, e.Offset)
	case ErrPlaceholderCommand:
		return fmt.Sprintf("%s: placeholder %q at byte %d is the command name; put the program first", e.Part, e.Text, e.Offset)
	case ErrHereDoc:
		return fmt.Sprintf("%s: here-document %q at byte %d is not supported", e.Part, e.Text, e.Offset)
	case ErrRedirectTarget:
		return fmt.Sprintf("%s: redirection %q at byte %d has no target", e.Part, e.Text, e.Offset)
	}
	return fmt.Sprintf("%s: %v %q at byte %d", e.Part, e.Err, e.Text, e.Offset)
}

func (e *TemplateError) Unwrap() error { return e.Err }

// Template is a validated resume template.
type Template struct {
	src      string
	slots    [][2]int // byte ranges of placeholder words, in order
	appendAt int      // where the id is inserted when there are no slots
}

// String returns the template source.
func (t *Template) String() string { return t.src }

// HasPlaceholder reports whether the template names where the id goes (as
// opposed to having it appended).
func (t *Template) HasPlaceholder() bool { return len(t.slots) > 0 }

// analyze parses src and refuses what neither a launch command nor a
// template may be: blank, unparsable, a here-document, or without a
// command to run.
func analyze(part, src string) (*tree, error) {
	if strings.TrimSpace(src) == "" {
		return nil, &TemplateError{Part: part, Err: ErrEmptyCommand}
	}
	t, err := parse(src)
	if err != nil {
		if se, ok := errors.AsType[*SyntaxError](err); ok {
			return nil, &TemplateError{Part: part, Err: err, Offset: se.Offset, Text: se.Text}
		}
		if te, ok := errors.AsType[*TemplateError](err); ok {
			te.Part = part
			return nil, te
		}
		return nil, fmt.Errorf("%s: %w", part, err)
	}
	if h := t.heredoc; h != nil {
		return nil, &TemplateError{Part: part, Err: ErrHereDoc, Offset: int(h.OpPos.Offset()), Text: h.Op.String()}
	}
	if !t.hasCommand() {
		te := &TemplateError{Part: part, Err: ErrEmptyCommand}
		if len(t.file.Stmts) > 0 {
			te.Offset = int(t.file.Stmts[0].Pos().Offset())
			te.Text = snippet(strings.TrimSpace(src[te.Offset:]))
		}
		return nil, te
	}
	return t, nil
}

// hasCommand reports whether a simple command with a command name runs
// (outside substitutions): assignments, redirections and builtins such as
// export, let, [[ ]] and (( )) alone start nothing.
func (t *tree) hasCommand() bool {
	found := false
	syntax.Walk(t.file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			return false
		case *syntax.CallExpr:
			found = found || len(n.Args) > 0
		}
		return !found
	})
	return found
}

// composition returns the first construct, in source order, that makes the
// command more than one simple command: a control operator between
// commands (| || |& && ; & or a newline), a background &, a subshell or
// process substitution, or a compound command (if, while, for, case, { },
// a function, coproc).
func (t *tree) composition() (off int, text string, ok bool) {
	off = -1
	note := func(p syntax.Pos, s string) {
		if o := int(p.Offset()); off < 0 || o < off {
			off, text = o, s
		}
	}
	if stmts := t.file.Stmts; len(stmts) > 1 {
		s := stmts[0]
		switch {
		case s.Semicolon.IsValid():
			note(s.Semicolon, t.src[s.Semicolon.Offset():s.End().Offset()])
		default:
			end := int(s.End().Offset())
			if i := strings.IndexByte(t.src[end:], '\n'); i >= 0 {
				note(syntax.NewPos(uint(end+i), 0, 0), "\n")
			} else {
				note(stmts[1].Pos(), fieldAt(t.src, int(stmts[1].Pos().Offset())))
			}
		}
	}
	syntax.Walk(t.file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			for _, p := range n.Parts {
				if ps, ok := p.(*syntax.ProcSubst); ok {
					note(ps.OpPos, ps.Op.String())
				}
			}
			return false
		case *syntax.Stmt:
			if n.Background {
				note(n.Semicolon, "&")
			}
		case *syntax.BinaryCmd:
			note(n.OpPos, n.Op.String())
		case *syntax.Subshell:
			note(n.Lparen, "(")
		case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause,
			*syntax.Block, *syntax.FuncDecl, *syntax.CoprocClause:
			note(n.Pos(), fieldAt(t.src, int(n.Pos().Offset())))
		}
		return true
	})
	return off, text, off >= 0
}

// fieldAt returns the text at off up to the next blank, newline or ";".
func fieldAt(src string, off int) string {
	end := strings.IndexAny(src[off:], " \t\n;")
	if end < 0 {
		return snippet(src[off:])
	}
	return snippet(src[off : off+end])
}

// ParseTemplate validates a resume template (see the package comment for the
// rules).
func ParseTemplate(src string) (*Template, error) {
	const part = "resume command"
	t, err := analyze(part, src)
	if err != nil {
		return nil, err
	}
	return t.template(part)
}

// template checks where the placeholder stands in a parsed template and
// finds its slots, or where the id is appended.
func (t *tree) template(part string) (*Template, error) {
	src := t.src
	tmpl := &Template{src: src, appendAt: -1}
	var first *TemplateError // the refusal that comes first in the source
	fail := func(err error, off int, text string) {
		if first == nil || off < first.Offset {
			first = &TemplateError{Part: part, Err: err, Offset: off, Text: text}
		}
	}
	for q := range placeholders(src) {
		if c, ok := t.commentAt(q); ok {
			fail(ErrPlaceholderInComment, c[0], src[c[0]:c[1]])
			continue
		}
		w, ok := t.wordAt(q)
		switch {
		case !ok:
			// Not in a word: a function or loop variable name, say.
			fail(ErrEmbeddedPlaceholder, q, around(src, q, q+len(Placeholder)))
		case w.Raw != Placeholder:
			if w.quoted(q) {
				fail(ErrQuotedPlaceholder, w.Start, w.Raw)
			} else {
				fail(ErrEmbeddedPlaceholder, w.Start, w.Raw)
			}
		case !blankBefore(src, w.Start) || !blankAfter(src, w.End):
			fail(ErrEmbeddedPlaceholder, w.Start, around(src, w.Start, w.End))
		case w.kind == redirectWord:
			fail(ErrPlaceholderRedirect, w.Start, w.redirect+" "+w.Raw)
		case w.kind == commandWord:
			fail(ErrPlaceholderCommand, w.Start, w.Raw)
		default:
			tmpl.slots = append(tmpl.slots, [2]int{w.Start, w.End})
		}
	}
	for _, w := range t.words {
		if !strings.Contains(w.Raw, Placeholder) && strings.Contains(w.Value, Placeholder) {
			// Assembled from quoted pieces, e.g. '{session'_id}.
			fail(ErrQuotedPlaceholder, w.Start, w.Raw)
		}
	}
	if first != nil {
		return nil, first
	}
	if len(tmpl.slots) > 0 {
		return tmpl, nil
	}
	if off, text, ok := t.composition(); ok {
		return nil, &TemplateError{Part: part, Err: ErrComposition, Offset: off, Text: text}
	}
	// One simple command: the id goes after its last word.
	tmpl.appendAt = t.words[len(t.words)-1].End
	return tmpl, nil
}

// placeholders yields the offsets of {session_id} in src.
func placeholders(src string) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := 0; ; i += len(Placeholder) {
			k := strings.Index(src[i:], Placeholder)
			if k < 0 || !yield(i+k) {
				return
			}
			i += k
		}
	}
}

func (t *tree) commentAt(off int) ([2]int, bool) {
	for _, c := range t.comments {
		if off >= c[0] && off < c[1] {
			return c, true
		}
	}
	return [2]int{}, false
}

func (t *tree) wordAt(off int) (word, bool) {
	for _, w := range t.words {
		if off >= w.Start && off < w.End {
			return w, true
		}
	}
	return word{}, false
}

// quoted reports whether the byte at off of w is inside quotes or escaped
// by a backslash.
func (w word) quoted(off int) bool {
	for _, r := range w.quote {
		if off >= r[0] && off < r[1] {
			return true
		}
	}
	n := 0
	for i := off - 1; i >= w.Start && w.Raw[i-w.Start] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func blankBefore(src string, i int) bool {
	return i == 0 || isBlank(src[i-1]) || src[i-1] == '\n'
}

func blankAfter(src string, i int) bool {
	return i == len(src) || isBlank(src[i]) || src[i] == '\n'
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// around returns the whitespace-delimited text containing src[start:end].
func around(src string, start, end int) string {
	for start > 0 && !isBlank(src[start-1]) && src[start-1] != '\n' {
		start--
	}
	for end < len(src) && !isBlank(src[end]) && src[end] != '\n' {
		end++
	}
	return src[start:end]
}

// Render returns the command that resumes sessionID: each placeholder word
// replaced by the shell-quoted id, or the quoted id appended as the last
// word. The id must be non-empty UTF-8 without NUL bytes or carriage
// returns.
func (t *Template) Render(sessionID string) (string, error) {
	if sessionID == "" {
		return "", fmt.Errorf("render resume command: %w: empty", ErrBadSessionID)
	}
	if strings.IndexByte(sessionID, 0) >= 0 {
		return "", fmt.Errorf("render resume command: %w: contains a NUL byte", ErrBadSessionID)
	}
	if strings.IndexByte(sessionID, '\r') >= 0 {
		return "", fmt.Errorf("render resume command: %w: contains a carriage return", ErrBadSessionID)
	}
	if !utf8.ValidString(sessionID) {
		return "", fmt.Errorf("render resume command: %w: not UTF-8", ErrBadSessionID)
	}
	q := ShellQuote(sessionID)
	if len(t.slots) == 0 {
		return t.src[:t.appendAt] + " " + q + t.src[t.appendAt:], nil
	}
	var b strings.Builder
	prev := 0
	for _, s := range t.slots {
		b.WriteString(t.src[prev:s[0]])
		b.WriteString(q)
		prev = s[1]
	}
	b.WriteString(t.src[prev:])
	return b.String(), nil
}

// RenderResume validates tmpl and renders it for sessionID.
func RenderResume(tmpl, sessionID string) (string, error) {
	t, err := ParseTemplate(tmpl)
	if err != nil {
		return "", err
	}
	return t.Render(sessionID)
}

// ResumeTemplate validates a custom launcher and returns the template that
// resumes its sessions: resumeTmpl when it is not blank, otherwise the launch
// command itself (the id is then appended). Both are checked before anything
// is persisted.
func ResumeTemplate(launchCmd, resumeTmpl string) (*Template, error) {
	const part = "launch command"
	t, err := analyze(part, launchCmd)
	if err != nil {
		return nil, err
	}
	for q := range placeholders(launchCmd) {
		if _, ok := t.commentAt(q); ok {
			continue
		}
		off, text := q, Placeholder
		if w, ok := t.wordAt(q); ok {
			off, text = w.Start, w.Raw
		}
		return nil, &TemplateError{Part: part, Err: ErrPlaceholderInLaunch, Offset: off, Text: text}
	}
	if strings.TrimSpace(resumeTmpl) != "" {
		return ParseTemplate(resumeTmpl)
	}
	if off, text, ok := t.composition(); ok {
		return nil, &TemplateError{Part: part, Err: ErrCompositionNeedsResume, Offset: off, Text: text}
	}
	return t.template(part)
}

// ValidateLaunch reports whether a custom launcher (launch command plus
// optional resume template) may be persisted.
func ValidateLaunch(launchCmd, resumeTmpl string) error {
	_, err := ResumeTemplate(launchCmd, resumeTmpl)
	return err
}
