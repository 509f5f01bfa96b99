package launcher

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Syntax errors. A *SyntaxError wraps one of them.
var (
	// ErrUnterminatedQuote means a quote ('...', "..." or $'...') is not closed.
	ErrUnterminatedQuote = errors.New("unterminated quote")
	// ErrDanglingEscape means the command ends with a backslash.
	ErrDanglingEscape = errors.New("dangling escape")
	// ErrUnterminatedSubst means $(...), ${...}, $((...)) or `...` is not
	// closed.
	ErrUnterminatedSubst = errors.New("unterminated substitution")
	// ErrSyntax is any other shell syntax error, such as a ")" that closes
	// nothing or an "if" without "fi".
	ErrSyntax = errors.New("syntax error")
)

// SyntaxError reports where a command failed to parse.
type SyntaxError struct {
	Err    error  // one of the syntax Err* values
	Offset int    // byte offset of the construct that is not closed
	Text   string // the offending text, shortened
	Detail string // for ErrSyntax: the parser's description
}

func (e *SyntaxError) Error() string {
	switch e.Err {
	case ErrDanglingEscape:
		return fmt.Sprintf("dangling escape %q at byte %d (end of command)", e.Text, e.Offset)
	case ErrUnterminatedQuote:
		return fmt.Sprintf("unterminated quote %q starting at byte %d", e.Text, e.Offset)
	case ErrUnterminatedSubst:
		return fmt.Sprintf("unterminated substitution %q starting at byte %d", e.Text, e.Offset)
	}
	return fmt.Sprintf("syntax error at %q, byte %d: %s", e.Text, e.Offset, e.Detail)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// Word is one shell word of a command: a command name, an argument, a
// NAME=value assignment or a redirection target. Words inside command
// substitutions are part of the word that contains the substitution.
type Word struct {
	Start int    // byte offset of the first byte in the source
	End   int    // byte offset just past the last byte
	Raw   string // the source text, Raw == src[Start:End]
	// Value is the word after quote removal: quotes are dropped, backslash
	// escapes and $'...' escapes are decoded, line continuations removed.
	// Parameter expansions and command and arithmetic substitutions are
	// kept verbatim (nothing is expanded).
	Value string
}

// Words parses src as a shell program and returns its words in source
// order. Reserved words (if, then, for, ...) and operators are not words.
func Words(src string) ([]Word, error) {
	t, err := parse(src)
	if err != nil {
		return nil, err
	}
	out := make([]Word, len(t.words))
	for i, w := range t.words {
		out[i] = w.Word
	}
	return out, nil
}

// wordKind is where a word stands in its command.
type wordKind int

const (
	argWord      wordKind = iota // an argument, or a word of a compound command
	commandWord                  // the command name of a simple command
	redirectWord                 // the target of a redirection
	assignWord                   // NAME=value
)

// word is a Word of the syntax tree, outside any substitution.
type word struct {
	Word
	kind     wordKind
	redirect string   // for a redirectWord: the operator
	quote    [][2]int // source ranges inside quotes
}

// tree is a parsed command and what the checks need from it.
type tree struct {
	src      string
	file     *syntax.File
	words    []word   // outside substitutions, in source order
	comments [][2]int // source ranges of comments, # included
	heredoc  *syntax.Redirect
}

// parse parses src in the bash dialect (a superset of POSIX sh with $'...',
// |&, &> and process substitution) and collects its words.
func parse(src string) (*tree, error) {
	for i, r := range src {
		detail := ""
		switch {
		case r == 0:
			detail = "NUL byte" // a command line cannot carry one
		case r == utf8.RuneError && !strings.HasPrefix(src[i:], "\uFFFD"):
			detail = "not UTF-8"
		case r == '\r':
			// The parser reads CR LF as a newline and a lone CR as a
			// blank; bash keeps CR in the word. Refuse, not disagree.
			detail = "carriage return (CRLF line endings?)"
		default:
			continue
		}
		return nil, &SyntaxError{Err: ErrSyntax, Offset: i, Text: snippet(src[i:]), Detail: detail}
	}
	p := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash))
	f, err := p.Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, syntaxError(src, err)
	}
	t := &tree{src: src, file: f}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Comment:
			start := int(n.Hash.Offset())
			end := strings.IndexByte(src[start:], '\n')
			if end < 0 {
				end = len(src) - start
			}
			t.comments = append(t.comments, [2]int{start, start + end})
		case *syntax.Redirect:
			if (n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc) && t.heredoc == nil {
				t.heredoc = n
			}
		}
		return true
	})
	// The words outside substitutions, and where each stands.
	kinds := map[*syntax.Word]wordKind{}
	redirects := map[*syntax.Word]string{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			kinds[n.Word] = redirectWord
			redirects[n.Word] = n.Op.String()
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				kinds[n.Args[0]] = commandWord
			}
		case *syntax.Assign:
			if n.Name != nil {
				t.words = append(t.words, t.assignWord(n))
				return false
			}
		case *syntax.Word:
			w := t.word(n, kinds[n])
			w.redirect = redirects[n]
			t.words = append(t.words, w)
			return false
		}
		return true
	})
	slices.SortFunc(t.words, func(a, b word) int { return a.Start - b.Start })
	for _, c := range t.comments {
		if c[1] < len(src) && strings.HasSuffix(src[c[0]:c[1]], `\`) {
			// Bash ends the comment at the newline; the parser takes the
			// backslash for a line continuation and can join the next line
			// to the word before the comment.
			return nil, &SyntaxError{Err: ErrSyntax, Offset: c[0], Text: snippet(src[c[0]:c[1]]), Detail: "a comment ends with a backslash"}
		}
	}
	if end, ok := t.danglingEscape(); ok {
		return nil, &SyntaxError{Err: ErrDanglingEscape, Offset: end, Text: `\`}
	}
	return t, nil
}

func (t *tree) word(w *syntax.Word, kind wordKind) word {
	start, end := int(w.Pos().Offset()), int(w.End().Offset())
	out := word{kind: kind}
	out.Start, out.End, out.Raw = start, end, t.src[start:end]
	out.Value = t.value(w)
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			out.quote = append(out.quote, [2]int{int(n.Pos().Offset()), int(n.End().Offset())})
			return false
		}
		return true
	})
	return out
}

func (t *tree) assignWord(a *syntax.Assign) word {
	start, end := int(a.Pos().Offset()), int(a.End().Offset())
	op := "="
	if a.Append {
		op = "+="
	}
	if a.Value == nil && a.Array == nil && a.Index == nil && !a.Naked {
		// Assign.End misses the + of an empty NAME+=.
		end = int(a.Name.End().Offset()) + len(op)
	}
	out := word{kind: assignWord}
	out.Start, out.End, out.Raw = start, end, t.src[start:end]
	switch {
	case a.Array != nil || a.Index != nil:
		out.Value = out.Raw
	case a.Value != nil:
		v := t.word(a.Value, argWord)
		out.Value = a.Name.Value + op + v.Value
		out.quote = v.quote
	case a.Naked:
		out.Value = a.Name.Value
	default:
		out.Value = a.Name.Value + op
	}
	return out
}

// danglingEscape reports whether the command ends with an unquoted
// backslash that escapes nothing (the parser takes it as a literal "\").
func (t *tree) danglingEscape() (int, bool) {
	src := t.src
	n := 0
	for n < len(src) && src[len(src)-1-n] == '\\' {
		n++
	}
	if n%2 == 0 {
		return 0, false
	}
	end := len(src) - 1
	for _, c := range t.comments {
		if end >= c[0] && end < c[1] {
			return 0, false
		}
	}
	return end, true
}

// value returns w after quote removal, with expansions kept verbatim.
func (t *tree) value(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, true))
				} else {
					b.WriteString(t.src[q.Pos().Offset():q.End().Offset()])
				}
			}
		default:
			b.WriteString(t.src[p.Pos().Offset():p.End().Offset()])
		}
	}
	return b.String()
}

// unescape removes the backslashes of a literal: every one outside double
// quotes, and inside them only those before $ ` " \ (line continuations
// are already gone from the parser's literals).
func unescape(s string, dquoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		if dquoted && !strings.ContainsRune("$`\"\\", rune(s[i+1])) {
			b.WriteByte('\\')
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i+1:])
		b.WriteString(s[i+1 : i+1+size])
		i += size
	}
	return b.String()
}

// syntaxError turns a parser error into a *SyntaxError that names the
// construct at the error's offset.
func syntaxError(src string, err error) error {
	var pos syntax.Pos
	detail := err.Error()
	incomplete := false
	var pe syntax.ParseError
	var le syntax.LangError
	switch {
	case errors.As(err, &pe):
		pos, detail, incomplete = pe.Pos, pe.Text, pe.Incomplete
	case errors.As(err, &le):
		pos, detail = le.Pos, le.Error()
	}
	off := min(int(pos.Offset()), len(src))
	rest := src[off:]
	kind := ErrSyntax
	switch {
	case incomplete && hasAnyPrefix(rest, `'`, `"`, `$'`, `$"`):
		kind = ErrUnterminatedQuote
	case incomplete && hasAnyPrefix(rest, "$(", "${", "$[", "`"):
		kind = ErrUnterminatedSubst
	case strings.HasPrefix(rest, "<<") && !strings.HasPrefix(rest, "<<<"):
		return &TemplateError{Err: ErrHereDoc, Offset: off, Text: redirectOp(rest)}
	case redirectOp(rest) != "":
		return &TemplateError{Err: ErrRedirectTarget, Offset: off, Text: redirectOp(rest)}
	}
	return &SyntaxError{Err: kind, Offset: off, Text: snippet(rest), Detail: detail}
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// redirectOp returns the redirection operator s starts with, if any.
func redirectOp(s string) string {
	for _, op := range []string{"&>>", "<<-", "<<", ">>", "<&", ">&", "<>", ">|", "&>", "<", ">"} {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return ""
}

func snippet(s string) string {
	const max = 24
	if len(s) <= max {
		return s
	}
	// Cut on a rune boundary.
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ansiC decodes the body of a bash $'...' string. The parser keeps it
// verbatim and only the interpreter of mvdan.cc/sh decodes it, through
// printf's rules (which lack \c and misread %); bash's own rules are these.
func ansiC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		e := s[i]
		if r, ok := ansiCSimple[e]; ok {
			b.WriteByte(r)
			continue
		}
		switch e {
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := digits(s[i:], 3, "01234567")
			v, _ := strconv.ParseUint(s[i:i+n], 8, 16)
			b.WriteByte(byte(v))
			i += n - 1
		case 'x', 'u', 'U':
			n := digits(s[i+1:], map[byte]int{'x': 2, 'u': 4, 'U': 8}[e], "0123456789abcdefABCDEF")
			v, _ := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			switch {
			case n == 0:
				b.WriteString(`\` + string(e))
			case e == 'x':
				b.WriteByte(byte(v))
			default:
				b.WriteRune(rune(v))
			}
			i += n
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

var ansiCSimple = map[byte]byte{
	'a': '\a', 'b': '\b', 'e': 0x1b, 'E': 0x1b, 'f': '\f', 'n': '\n', 'r': '\r',
	't': '\t', 'v': '\v', '\\': '\\', '\'': '\'', '"': '"', '?': '?',
}

// digits returns how many of the first max bytes of s are in set.
func digits(s string, max int, set string) int {
	n := 0
	for n < max && n < len(s) && strings.IndexByte(set, s[n]) >= 0 {
		n++
	}
	return n
}
