package launcher

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tok is a compact description of a word for table tests.
type tok struct {
	Raw   string
	Value string
}

func simplify(words []Word) []tok {
	out := make([]tok, len(words))
	for i, w := range words {
		out[i] = tok{Raw: w.Raw, Value: w.Value}
	}
	return out
}

func w(raw, value string) tok { return tok{Raw: raw, Value: value} }

// TestWords checks the words the parser finds and their values after quote
// removal. Operators, comments and reserved words are not words.
func TestWords(t *testing.T) {
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
		{"comment at word start", "agent --x # a comment; not && ops", []tok{w("agent", "agent"), w("--x", "--x")}},
		{"hash inside word", "a#b", []tok{w("a#b", "a#b")}},
		{"comment then newline", "a # c\nb", []tok{w("a", "a"), w("b", "b")}},
		{"operators", "a|b||c&d&&e;f|&g", []tok{
			w("a", "a"), w("b", "b"), w("c", "c"), w("d", "d"), w("e", "e"), w("f", "f"), w("g", "g"),
		}},
		// The 2 of 2>&1 is a file descriptor number, not a word.
		{"redirections", "a 2>&1 >>log <in &>all", []tok{
			w("a", "a"), w("1", "1"), w("log", "log"), w("in", "in"), w("all", "all"),
		}},
		{"subshell", "(a)", []tok{w("a", "a")}},
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
			words, err := Words(tt.src)
			if err != nil {
				t.Fatalf("Words(%q): %v", tt.src, err)
			}
			if diff := cmp.Diff(tt.want, simplify(words)); diff != "" {
				t.Errorf("Words(%q) (-want +got):\n%s", tt.src, diff)
			}
			for _, wd := range words {
				if tt.src[wd.Start:wd.End] != wd.Raw {
					t.Errorf("word %+v: Raw does not match src[%d:%d]", wd, wd.Start, wd.End)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
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
			_, err := Words(tt.src)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Words(%q) error = %v, want %v", tt.src, err, tt.want)
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
		// Keywords would not be plain words in command position (fuzz
		// finding: Words("do") is a syntax error).
		{"do", "'do'"},
		{"time", "'time'"},
		{"declare", "'declare'"},
		{"done1", "done1"},
	}
	for kw := range keywords {
		tests = append(tests, struct{ in, want string }{kw, "'" + kw + "'"})
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := ShellQuote(tt.in)
			if got != tt.want {
				t.Errorf("ShellQuote(%q) = %q, want %q", tt.in, got, tt.want)
			}
			words, err := Words(got)
			if err != nil || len(words) != 1 || words[0].Value != tt.in {
				t.Errorf("Words(ShellQuote(%q)) = %+v, %v; want one word", tt.in, words, err)
			}
		})
	}
}

// TestWordsMatchShell checks word values against a real shell for inputs
// without expansions, so Words and bash agree on quoting.
func TestWordsMatchShell(t *testing.T) {
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
		`$'\cA\e[1m\x4g\u263a%s\?\q\0101' "a\b\$"`,
		`A+= B=$'x' env 'C=d'`,
	}
	for _, src := range srcs {
		t.Run(src, func(t *testing.T) {
			parsed, err := Words(src)
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
			if diff := cmp.Diff(got, values(parsed)); diff != "" {
				t.Errorf("bash vs Words(%q) (-bash +words):\n%s", src, diff)
			}
		})
	}
}
