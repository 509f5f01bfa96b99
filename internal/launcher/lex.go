package launcher

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is the kind of a Token.
type Kind int

const (
	// Word is a shell word: a command name, an argument, an assignment or a
	// redirection target.
	Word Kind = iota
	// Operator is a control or redirection operator, or a newline.
	Operator
	// Comment is a comment from # to the end of its line (newline excluded).
	Comment
)

func (k Kind) String() string {
	switch k {
	case Word:
		return "word"
	case Operator:
		return "operator"
	case Comment:
		return "comment"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Token is one lexical unit of a shell command.
type Token struct {
	Kind  Kind
	Start int    // byte offset of the first byte in the source
	End   int    // byte offset just past the last byte
	Raw   string // the source text, Raw == src[Start:End]
	// Value is a Word after quote removal: quotes are dropped, backslash
	// escapes and $'...' escapes are decoded, line continuations removed.
	// Parameter expansions and command substitutions are kept verbatim
	// (nothing is expanded).
	Value string
	// Quoted reports whether a Word used quotes or backslash escapes.
	Quoted bool

	quoted [][2]int // absolute byte ranges inside quotes or escaped
	subst  [][2]int // absolute byte ranges of $(...), ${...}, `...`
}

// Lexer errors. A *SyntaxError wraps one of them.
var (
	// ErrUnterminatedQuote means a quote ('...', "..." or $'...') is not closed.
	ErrUnterminatedQuote = errors.New("unterminated quote")
	// ErrDanglingEscape means the command ends with a backslash.
	ErrDanglingEscape = errors.New("dangling escape")
	// ErrUnterminatedSubst means $(...), ${...} or `...` is not closed.
	ErrUnterminatedSubst = errors.New("unterminated substitution")
)

// SyntaxError reports where a command failed to lex.
type SyntaxError struct {
	Err    error  // one of the Err* lexer values
	Offset int    // byte offset of the construct that is not closed
	Text   string // the offending text, shortened
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
	return fmt.Sprintf("%v at byte %d", e.Err, e.Offset)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// operators lists the recognized operators, longest first so that the first
// prefix match is the longest one.
var operators = []string{
	";;&", "<<-", "&>>",
	"||", "&&", ";;", ";&", "|&", "<<", ">>", "<&", ">&", "<>", ">|", "&>",
	"|", "&", ";", "<", ">", "(", ")",
}

func isOpByte(c byte) bool {
	switch c {
	case '|', '&', ';', '<', '>', '(', ')':
		return true
	}
	return false
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// isControl reports whether op separates or groups commands (as opposed to a
// redirection).
func isControl(op string) bool {
	switch op {
	case "|", "||", "|&", "&", "&&", ";", ";;", ";&", ";;&", "(", ")", "\n":
		return true
	}
	return false
}

// isRedirect reports whether op is a redirection operator.
func isRedirect(op string) bool {
	switch op {
	case "<", ">", ">>", "<<", "<<-", "<&", ">&", "<>", ">|", "&>", "&>>":
		return true
	}
	return false
}

// Lex splits src into words, operators and comments following POSIX token
// recognition (plus bash $'...' and $"..."). It fails only on input that
// does not end cleanly: an open quote, an open substitution or a trailing
// backslash.
func Lex(src string) ([]Token, error) {
	var toks []Token
	n := len(src)
	i := 0
	for i < n {
		c := src[i]
		switch {
		case isBlank(c):
			i++
		case c == '\\' && i+1 < n && src[i+1] == '\n':
			i += 2 // line continuation between words
		case c == '\n':
			toks = append(toks, Token{Kind: Operator, Start: i, End: i + 1, Raw: "\n"})
			i++
		case c == '#':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = n
			} else {
				j += i
			}
			toks = append(toks, Token{Kind: Comment, Start: i, End: j, Raw: src[i:j]})
			i = j
		case isOpByte(c):
			for _, op := range operators {
				if strings.HasPrefix(src[i:], op) {
					toks = append(toks, Token{Kind: Operator, Start: i, End: i + len(op), Raw: op})
					i += len(op)
					break
				}
			}
		default:
			t, err := lexWord(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = t.End
		}
	}
	return toks, nil
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

func synErr(err error, src string, off int) error {
	return &SyntaxError{Err: err, Offset: off, Text: snippet(src[off:])}
}

// lexWord scans the word starting at i.
func lexWord(src string, i int) (Token, error) {
	n := len(src)
	t := Token{Kind: Word, Start: i}
	var val strings.Builder
	for i < n {
		c := src[i]
		if isBlank(c) || c == '\n' || isOpByte(c) {
			break
		}
		switch c {
		case '\\':
			if i+1 >= n {
				return t, synErr(ErrDanglingEscape, src, i)
			}
			if src[i+1] == '\n' {
				i += 2
				continue
			}
			_, size := utf8.DecodeRuneInString(src[i+1:])
			val.WriteString(src[i+1 : i+1+size])
			t.quoted = append(t.quoted, [2]int{i, i + 1 + size})
			t.Quoted = true
			i += 1 + size
		case '\'':
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return t, synErr(ErrUnterminatedQuote, src, i)
			}
			j += i + 1
			val.WriteString(src[i+1 : j])
			t.quoted = append(t.quoted, [2]int{i, j + 1})
			t.Quoted = true
			i = j + 1
		case '"':
			end, err := lexDouble(src, i, &val, &t)
			if err != nil {
				return t, err
			}
			t.quoted = append(t.quoted, [2]int{i, end})
			t.Quoted = true
			i = end
		case '`':
			end, err := skipBacktick(src, i)
			if err != nil {
				return t, err
			}
			val.WriteString(src[i:end])
			t.subst = append(t.subst, [2]int{i, end})
			i = end
		case '$':
			if i+1 < n {
				switch src[i+1] {
				case '\'':
					end, s, err := lexANSIC(src, i)
					if err != nil {
						return t, err
					}
					val.WriteString(s)
					t.quoted = append(t.quoted, [2]int{i, end})
					t.Quoted = true
					i = end
					continue
				case '"':
					// $"..." is a locale-translated string: quoted like "...".
					end, err := lexDouble(src, i+1, &val, &t)
					if err != nil {
						return t, err
					}
					t.quoted = append(t.quoted, [2]int{i, end})
					t.Quoted = true
					i = end
					continue
				case '(', '{':
					end, err := skipSubst(src, i)
					if err != nil {
						return t, err
					}
					val.WriteString(src[i:end])
					t.subst = append(t.subst, [2]int{i, end})
					i = end
					continue
				}
			}
			val.WriteByte('$')
			i++
		default:
			val.WriteByte(c)
			i++
		}
	}
	t.End = i
	t.Raw = src[t.Start:t.End]
	t.Value = val.String()
	return t, nil
}

// lexDouble scans a double-quoted string whose opening quote is at i and
// returns the offset just past the closing quote.
func lexDouble(src string, i int, val *strings.Builder, t *Token) (int, error) {
	n := len(src)
	start := i
	i++
	for {
		if i >= n {
			return 0, synErr(ErrUnterminatedQuote, src, start)
		}
		c := src[i]
		switch c {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 >= n {
				return 0, synErr(ErrUnterminatedQuote, src, start)
			}
			switch src[i+1] {
			case '$', '`', '"', '\\':
				val.WriteByte(src[i+1])
				i += 2
			case '\n':
				i += 2
			default:
				val.WriteByte('\\')
				i++
			}
		case '`':
			end, err := skipBacktick(src, i)
			if err != nil {
				return 0, err
			}
			val.WriteString(src[i:end])
			t.subst = append(t.subst, [2]int{i, end})
			i = end
		case '$':
			if i+1 < n && (src[i+1] == '(' || src[i+1] == '{') {
				end, err := skipSubst(src, i)
				if err != nil {
					return 0, err
				}
				val.WriteString(src[i:end])
				t.subst = append(t.subst, [2]int{i, end})
				i = end
				continue
			}
			val.WriteByte('$')
			i++
		default:
			val.WriteByte(c)
			i++
		}
	}
}

// skipBacktick returns the offset just past the backquote that closes the
// one at i.
func skipBacktick(src string, i int) (int, error) {
	n := len(src)
	start := i
	i++
	for i < n {
		switch src[i] {
		case '\\':
			i += 2
			continue
		case '`':
			return i + 1, nil
		}
		i++
	}
	return 0, synErr(ErrUnterminatedSubst, src, start)
}

// skipSubst returns the offset just past the $(...), $((...)) or ${...} that
// starts at i (src[i] == '$').
func skipSubst(src string, i int) (int, error) {
	n := len(src)
	start := i
	open, close := src[i+1], byte(')')
	if open == '{' {
		close = '}'
	}
	depth := 0
	i++
	for i < n {
		c := src[i]
		switch {
		case c == open:
			depth++
			i++
		case c == close:
			depth--
			i++
			if depth == 0 {
				return i, nil
			}
		case c == '\\':
			i += 2
		case c == '\'':
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return 0, synErr(ErrUnterminatedQuote, src, i)
			}
			i += j + 2
		case c == '"':
			var discard strings.Builder
			var t Token
			end, err := lexDouble(src, i, &discard, &t)
			if err != nil {
				return 0, err
			}
			i = end
		case c == '`':
			end, err := skipBacktick(src, i)
			if err != nil {
				return 0, err
			}
			i = end
		case c == '$' && i+1 < n && src[i+1] != open && (src[i+1] == '(' || src[i+1] == '{'):
			end, err := skipSubst(src, i)
			if err != nil {
				return 0, err
			}
			i = end
		default:
			i++
		}
	}
	return 0, synErr(ErrUnterminatedSubst, src, start)
}

// lexANSIC scans a bash $'...' string at i and returns the offset just past
// it and its decoded value.
func lexANSIC(src string, i int) (int, string, error) {
	n := len(src)
	start := i
	i += 2
	var b strings.Builder
	for i < n {
		c := src[i]
		if c == '\'' {
			return i + 1, b.String(), nil
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= n {
			break
		}
		e := src[i+1]
		i += 2
		switch e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(e - '0')
			for k := 0; k < 2 && i < n && src[i] >= '0' && src[i] <= '7'; k++ {
				v = v*8 + int(src[i]-'0')
				i++
			}
			b.WriteByte(byte(v))
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			v, k := 0, 0
			for ; k < max && i < n && isHex(src[i]); k++ {
				v = v*16 + hexVal(src[i])
				i++
			}
			switch {
			case k == 0:
				b.WriteByte('\\')
				b.WriteByte(e)
			case e == 'x':
				b.WriteByte(byte(v))
			default:
				b.WriteRune(rune(v))
			}
		case 'c':
			if i < n {
				b.WriteByte(src[i] & 0x1f)
				i++
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return 0, "", synErr(ErrUnterminatedQuote, src, start)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// ShellQuote returns s as a single POSIX shell word whose value is s. Words
// made only of letters, digits and @%+=:,./_- are returned unchanged; the
// rest are single-quoted, and each embedded single quote becomes the
// four bytes ' \ ' ' (close, escaped quote, reopen).
// A NUL byte cannot be passed to a program and is kept as is; callers
// reject it earlier.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		if !isSafe(s[i]) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isSafe(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("@%+=:,./_-", c) >= 0
}
