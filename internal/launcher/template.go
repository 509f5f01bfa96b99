package launcher

import (
	"errors"
	"fmt"
	"strings"
)

// Placeholder marks where a resume template takes the native session id.
const Placeholder = "{session_id}"

// Validation errors. A *TemplateError wraps one of them (or a lexer error
// such as ErrUnterminatedQuote); match them with errors.Is.
var (
	// ErrEmptyCommand means the command has no command word.
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
		return fmt.Sprintf("%s is a shell composition (%q at byte %d); give an explicit resume command", e.Part, e.Text, e.Offset)
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

// analysis is what both launch commands and templates need from the tokens.
type analysis struct {
	toks        []Token
	words       int
	composition *Token // first control operator that makes a composition
}

func analyze(part, src string) (*analysis, error) {
	if strings.TrimSpace(src) == "" {
		return nil, &TemplateError{Part: part, Err: ErrEmptyCommand}
	}
	toks, err := Lex(src)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			return nil, &TemplateError{Part: part, Err: err, Offset: se.Offset, Text: se.Text}
		}
		return nil, fmt.Errorf("%s: %w", part, err)
	}
	a := &analysis{toks: toks}
	// Trailing newlines and comments end the command; they separate nothing.
	last := len(toks) - 1
	for last >= 0 && (toks[last].Kind == Comment || toks[last].Raw == "\n") {
		last--
	}
	for i := range toks {
		t := &toks[i]
		switch t.Kind {
		case Word:
			a.words++
		case Operator:
			if t.Raw == "<<" || t.Raw == "<<-" {
				return nil, &TemplateError{Part: part, Err: ErrHereDoc, Offset: t.Start, Text: t.Raw}
			}
			// <(...) and >(...) are process substitutions: the "(" that
			// follows makes the command a composition (checked below).
			procSubst := i+1 < len(toks) && toks[i+1].Raw == "(" && toks[i+1].Start == t.End
			if isRedirect(t.Raw) && !procSubst && (i+1 >= len(toks) || toks[i+1].Kind != Word) {
				return nil, &TemplateError{Part: part, Err: ErrRedirectTarget, Offset: t.Start, Text: t.Raw}
			}
			if isControl(t.Raw) && i <= last && a.composition == nil {
				if t.Raw == "\n" && precededOnlyBySeparators(toks[:i]) {
					continue // leading blank lines
				}
				a.composition = t
			}
		}
	}
	if a.words == 0 {
		return nil, &TemplateError{Part: part, Err: ErrEmptyCommand}
	}
	return a, nil
}

func precededOnlyBySeparators(toks []Token) bool {
	for _, t := range toks {
		if t.Kind == Word || (t.Kind == Operator && t.Raw != "\n") {
			return false
		}
	}
	return true
}

// ParseTemplate validates a resume template (see the package comment for the
// rules).
func ParseTemplate(src string) (*Template, error) {
	return parseTemplate("resume command", src)
}

func parseTemplate(part, src string) (*Template, error) {
	a, err := analyze(part, src)
	if err != nil {
		return nil, err
	}
	t := &Template{src: src, appendAt: -1}
	for i, tok := range a.toks {
		switch tok.Kind {
		case Comment:
			if k := strings.Index(tok.Raw, Placeholder); k >= 0 {
				return nil, &TemplateError{Part: part, Err: ErrPlaceholderInComment, Offset: tok.Start, Text: tok.Raw}
			}
		case Word:
			if tok.Raw == Placeholder {
				if !blankBefore(src, tok.Start) || !blankAfter(src, tok.End) {
					return nil, &TemplateError{Part: part, Err: ErrEmbeddedPlaceholder, Offset: tok.Start, Text: around(src, tok.Start, tok.End)}
				}
				if i > 0 && a.toks[i-1].Kind == Operator && isRedirect(a.toks[i-1].Raw) {
					return nil, &TemplateError{Part: part, Err: ErrPlaceholderRedirect, Offset: tok.Start, Text: a.toks[i-1].Raw + " " + tok.Raw}
				}
				if commandPosition(a.toks, i) {
					return nil, &TemplateError{Part: part, Err: ErrPlaceholderCommand, Offset: tok.Start, Text: tok.Raw}
				}
				t.slots = append(t.slots, [2]int{tok.Start, tok.End})
				continue
			}
			if err := checkWord(part, tok); err != nil {
				return nil, err
			}
		}
	}
	if len(t.slots) > 0 {
		return t, nil
	}
	if a.composition != nil {
		return nil, &TemplateError{Part: part, Err: ErrComposition, Offset: a.composition.Start, Text: a.composition.Raw}
	}
	for i := len(a.toks) - 1; i >= 0; i-- {
		if a.toks[i].Kind == Word {
			t.appendAt = a.toks[i].End
			break
		}
	}
	return t, nil
}

// commandPosition reports whether word i is the first word of a simple
// command, not counting NAME=value assignments and redirections before it.
func commandPosition(toks []Token, i int) bool {
	for j := i - 1; j >= 0; j-- {
		t := toks[j]
		switch {
		case t.Kind == Comment:
			continue
		case t.Kind == Operator && isControl(t.Raw):
			return true
		case t.Kind == Operator:
			continue // a redirection; its target word is skipped below
		case j > 0 && toks[j-1].Kind == Operator && isRedirect(toks[j-1].Raw):
			continue // a redirection target
		case isAssignment(t.Raw):
			continue
		}
		return false
	}
	return true
}

func isAssignment(raw string) bool {
	name, _, ok := strings.Cut(raw, "=")
	return ok && isName(name)
}

// checkWord refuses a word that contains the placeholder without being it.
func checkWord(part string, tok Token) error {
	k := strings.Index(tok.Raw, Placeholder)
	if k < 0 {
		if strings.Contains(tok.Value, Placeholder) {
			// Assembled from quoted pieces, e.g. '{session'_id}.
			return &TemplateError{Part: part, Err: ErrQuotedPlaceholder, Offset: tok.Start, Text: tok.Raw}
		}
		return nil
	}
	pos := tok.Start + k
	for _, r := range tok.quoted {
		if pos >= r[0] && pos < r[1] {
			return &TemplateError{Part: part, Err: ErrQuotedPlaceholder, Offset: tok.Start, Text: tok.Raw}
		}
	}
	return &TemplateError{Part: part, Err: ErrEmbeddedPlaceholder, Offset: tok.Start, Text: tok.Raw}
}

func blankBefore(src string, i int) bool {
	return i == 0 || isBlank(src[i-1]) || src[i-1] == '\n'
}

func blankAfter(src string, i int) bool {
	return i == len(src) || isBlank(src[i]) || src[i] == '\n'
}

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
// word. The id must be non-empty and free of NUL bytes.
func (t *Template) Render(sessionID string) (string, error) {
	if sessionID == "" {
		return "", fmt.Errorf("render resume command: %w: empty", ErrBadSessionID)
	}
	if strings.IndexByte(sessionID, 0) >= 0 {
		return "", fmt.Errorf("render resume command: %w: contains a NUL byte", ErrBadSessionID)
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
	a, err := analyze(part, launchCmd)
	if err != nil {
		return nil, err
	}
	for _, tok := range a.toks {
		if tok.Kind != Comment && strings.Contains(tok.Raw, Placeholder) {
			return nil, &TemplateError{Part: part, Err: ErrPlaceholderInLaunch, Offset: tok.Start, Text: tok.Raw}
		}
	}
	if strings.TrimSpace(resumeTmpl) != "" {
		return ParseTemplate(resumeTmpl)
	}
	if a.composition != nil {
		return nil, &TemplateError{Part: part, Err: ErrCompositionNeedsResume, Offset: a.composition.Start, Text: a.composition.Raw}
	}
	return parseTemplate(part, launchCmd)
}

// ValidateLaunch reports whether a custom launcher (launch command plus
// optional resume template) may be persisted.
func ValidateLaunch(launchCmd, resumeTmpl string) error {
	_, err := ResumeTemplate(launchCmd, resumeTmpl)
	return err
}
