package launcher

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tok is a compact description of a token for table tests.
type tok struct {
	Kind  Kind
	Raw   string
	Value string
}

func simplify(toks []Token) []tok {
	out := make([]tok, len(toks))
	for i, t := range toks {
		out[i] = tok{Kind: t.Kind, Raw: t.Raw, Value: t.Value}
	}
	return out
}

func w(raw, value string) tok { return tok{Kind: Word, Raw: raw, Value: value} }
func op(raw string) tok       { return tok{Kind: Operator, Raw: raw} }
func cm(raw string) tok       { return tok{Kind: Comment, Raw: raw} }

func TestLex(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []tok
	}{
		{"plain words", "agent --flag value", []tok{w("agent", "agent"), w("--flag", "--flag"), w("value", "value")}},
		{"tabs and spaces", "a\t b", []tok{w("a", "a"), w("b", "b")}},
		{"escaped space", `my\ agent --x`, []tok{w(`my\ agent`, "my agent"), w("--x", "--x")}},
		{"single quotes", `'a b' c`, []tok{w(`'a b'`, "a b"), w("c", "c")}},
		{"single quotes keep backslash", `'a\b'`, []tok{w(`'a\b'`, `a\b`)}},
		{"double quotes with escapes", `"a \"b\" \$c \\ \x"`, []tok{w(`"a \"b\" \$c \\ \x"`, `a "b" $c \ \x`)}},
		{"adjacent quotes form one word", `'a'"b"c\ d`, []tok{w(`'a'"b"c\ d`, "abc d")}},
		{"ansi-c string", `$'a\tb\x41\'\101\u00e9'`, []tok{w(`$'a\tb\x41\'\101\u00e9'`, "a\tbA'Aé")}},
		{"locale string", `$"hi there"`, []tok{w(`$"hi there"`, "hi there")}},
		{"dollar alone", `a$ $b`, []tok{w("a$", "a$"), w("$b", "$b")}},
		{"comment at word start", "agent --x # a comment; not && ops", []tok{w("agent", "agent"), w("--x", "--x"), cm("# a comment; not && ops")}},
		{"hash inside word", "a#b", []tok{w("a#b", "a#b")}},
		{"comment then newline", "a # c\nb", []tok{w("a", "a"), cm("# c"), op("\n"), w("b", "b")}},
		{"operators", "a|b||c&d&&e;f;;g", []tok{
			w("a", "a"), op("|"), w("b", "b"), op("||"), w("c", "c"), op("&"), w("d", "d"),
			op("&&"), w("e", "e"), op(";"), w("f", "f"), op(";;"), w("g", "g"),
		}},
		{"redirections", "a 2>&1 >>log <in &>all", []tok{
			w("a", "a"), w("2", "2"), op(">&"), w("1", "1"), op(">>"), w("log", "log"),
			op("<"), w("in", "in"), op("&>"), w("all", "all"),
		}},
		{"subshell", "(a)", []tok{op("("), w("a", "a"), op(")")}},
		{"operators inside quotes", `a 'b && c' "d | e" f\;g`, []tok{w("a", "a"), w(`'b && c'`, "b && c"), w(`"d | e"`, "d | e"), w(`f\;g`, "f;g")}},
		{"command substitution", `a $(echo "x y" | tr x z) b`, []tok{w("a", "a"), w(`$(echo "x y" | tr x z)`, `$(echo "x y" | tr x z)`), w("b", "b")}},
		{"nested substitution", `a=$(b $(c) ")") d`, []tok{w(`a=$(b $(c) ")")`, `a=$(b $(c) ")")`), w("d", "d")}},
		{"arithmetic", `$((1 + (2)))x`, []tok{w(`$((1 + (2)))x`, `$((1 + (2)))x`)}},
		{"parameter expansion", `${HOME:-/x y}/bin`, []tok{w(`${HOME:-/x y}/bin`, `${HOME:-/x y}/bin`)}},
		{"backticks", "a `echo b c` d", []tok{w("a", "a"), w("`echo b c`", "`echo b c`"), w("d", "d")}},
		{"substitution in double quotes", `"$(echo "in")"`, []tok{w(`"$(echo "in")"`, `$(echo "in")`)}},
		{"line continuation", "a \\\nb c\\\nd", []tok{w("a", "a"), w("b", "b"), w("c\\\nd", "cd")}},
		{"braces are words", "{session_id} {a,b}", []tok{w("{session_id}", "{session_id}"), w("{a,b}", "{a,b}")}},
		{"utf-8", "agént 'ü'", []tok{w("agént", "agént"), w("'ü'", "ü")}},
		{"escaped multibyte", `\é`, []tok{w(`\é`, "é")}},
		{"empty", "", []tok{}},
		{"empty quotes", `'' ""`, []tok{w("''", ""), w(`""`, "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toks, err := Lex(tt.src)
			if err != nil {
				t.Fatalf("Lex(%q): %v", tt.src, err)
			}
			if diff := cmp.Diff(tt.want, simplify(toks)); diff != "" {
				t.Errorf("Lex(%q) (-want +got):\n%s", tt.src, diff)
			}
			for _, tk := range toks {
				if tt.src[tk.Start:tk.End] != tk.Raw {
					t.Errorf("token %+v: Raw does not match src[%d:%d]", tk, tk.Start, tk.End)
				}
			}
		})
	}
}

func TestLexErrors(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		want   error
		offset int
	}{
		{"unterminated single", "agent 'abc", ErrUnterminatedQuote, 6},
		{"unterminated double", `agent "abc`, ErrUnterminatedQuote, 6},
		{"escaped closing double", `agent "abc\"`, ErrUnterminatedQuote, 6},
		{"unterminated ansi-c", `agent $'abc\'`, ErrUnterminatedQuote, 6},
		{"trailing backslash", `agent --x \`, ErrDanglingEscape, 10},
		{"trailing backslash in word", `agent x\`, ErrDanglingEscape, 7},
		{"unterminated substitution", `agent $(echo`, ErrUnterminatedSubst, 6},
		{"unterminated backtick", "agent `echo", ErrUnterminatedSubst, 6},
		{"unterminated brace", `agent ${HOME`, ErrUnterminatedSubst, 6},
		{"quote inside substitution", `agent $(echo ')`, ErrUnterminatedQuote, 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Lex(tt.src)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Lex(%q) error = %v, want %v", tt.src, err, tt.want)
			}
			se, ok := errors.AsType[*SyntaxError](err)
			if !ok {
				t.Fatalf("error %T is not a *SyntaxError", err)
			}
			if se.Offset != tt.offset {
				t.Errorf("offset = %d, want %d (%v)", se.Offset, tt.offset, err)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "''"},
		{"abc-123_X.y/z:@%+=,", "abc-123_X.y/z:@%+=,"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"$HOME", "'$HOME'"},
		{"~x", "'~x'"},
		{"a\nb", "'a\nb'"},
		{"{session_id}", "'{session_id}'"},
		{"é", "'é'"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := ShellQuote(tt.in)
			if got != tt.want {
				t.Errorf("ShellQuote(%q) = %q, want %q", tt.in, got, tt.want)
			}
			toks, err := Lex(got)
			if err != nil || len(toks) != 1 || toks[0].Kind != Word || toks[0].Value != tt.in {
				t.Errorf("Lex(ShellQuote(%q)) = %+v, %v; want one word", tt.in, toks, err)
			}
		})
	}
}

// TestLexMatchesShell checks word values against a real shell for inputs
// without expansions, so the lexer and bash agree on quoting.
func TestLexMatchesShell(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not on PATH")
	}
	srcs := []string{
		`my\ agent --x`,
		`'a'"b"c\ d`,
		`"a \"b\" \$c \\ \x"`,
		`$'a\tb\x41\'\101\u00e9'`,
		"a \\\nb c\\\nd",
		`'it'\''s' {session_id} {a}`,
		`agent --msg 'a && b' x\;y`,
		ShellQuote("it's \"$(x)\" `y` \\ \n"),
		`a#b 'c' # comment`,
	}
	for _, src := range srcs {
		t.Run(src, func(t *testing.T) {
			toks, err := Lex(src)
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bash, "--norc", "--noprofile", "-c", "set -- "+src+"\nprintf '%s\\0' \"$@\"").Output()
			if err != nil {
				t.Fatalf("bash: %v", err)
			}
			got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			if len(out) == 0 {
				got = nil
			}
			if diff := cmp.Diff(got, words(toks)); diff != "" {
				t.Errorf("bash vs Lex(%q) (-bash +lex):\n%s", src, diff)
			}
		})
	}
}
