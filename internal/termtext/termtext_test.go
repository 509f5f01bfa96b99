package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// attack is what the issue measured: an approval message that sets the
// clipboard (OSC 52), retitles the window (OSC 0), clears the screen
// (CSI 2J), with an 8-bit CSI (U+009B) and a bell.
const attack = "Approve?\x1b]52;c;cm0gLXJmIH4K\x07\x1b]0;pwned\x1b\\\x1b[2J\u009b31mred\x07 done"

func TestStrip(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Approve the dependency update.", "Approve the dependency update."},
		{"empty", "", ""},
		{"unicode kept", "日本語 e\u0301 👩‍💻 ✓ ▲ € \u00a0", "日本語 e\u0301 👩‍💻 ✓ ▲ € \u00a0"},
		{"replacement char kept", "a\uFFFDb", "a\uFFFDb"},
		{"newlines and tabs kept", "a\n\tb\n", "a\n\tb\n"},
		{"crlf and lone cr", "a\r\nb\rc", "a\nb\nc"},
		{"the measured attack", attack, "Approve?red done"},
		{"OSC 52 with BEL", "x\x1b]52;c;aGVsbG8=\x07y", "xy"},
		{"OSC 52 with ST", "x\x1b]52;c;aGVsbG8=\x1b\\y", "xy"},
		{"OSC 0 title", "x\x1b]0;evil title\x07y", "xy"},
		{"OSC 8 hyperlink", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"CSI clear", "a\x1b[2Jb", "ab"},
		{"CSI private mode", "a\x1b[?1049hb", "ab"},
		{"CSI with intermediate", "a\x1b[2 qb", "ab"},
		{"SGR", "\x1b[1;31mred\x1b[0m", "red"},
		{"C1 CSI rune", "a\u009b2Jb", "ab"},
		{"C1 OSC rune ended by C1 ST", "a\u009d0;t\u009cb", "ab"},
		{"C1 OSC rune ended by BEL", "a\u009d52;c;eA==\x07b", "ab"},
		{"raw 8-bit CSI byte", "a\x9b2Jb", "ab"},
		{"raw 8-bit OSC byte", "a\x9d0;t\x07b", "ab"},
		{"other invalid bytes", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"lone C1", "a\u0085b\u0080c", "abc"},
		{"DCS", "a\x1bP1$r0m\x1b\\b", "ab"},
		{"tmux passthrough", "a\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\b", "ab"},
		{"APC, PM, SOS", "a\x1b_G1\x1b\\b\x1b^pm\x1b\\c\x1bXsos\x1b\\d", "abcd"},
		{"ESC short forms", "a\x1b7b\x1b8c\x1bcd\x1bMe", "abcde"},
		{"ESC with intermediate", "a\x1b(Bb\x1b#8c", "abc"},
		{"lone ESC at end", "a\x1b", "a"},
		{"ESC before non-ASCII", "a\x1bé", "aé"},
		{"ESC ESC", "a\x1b\x1b[2Jb", "ab"},
		{"unterminated OSC eats the rest", "a\x1b]52;c;eA==", "a"},
		{"unterminated CSI", "a\x1b[12;", "a"},
		{"OSC ended by a new ESC", "a\x1b]0;t\x1b[2Jb", "ab"},
		{"0x9C inside UTF-8 does not end OSC", "a\x1b]0;\u0153\u271c\x07b", "ab"},
		{"CAN cancels CSI", "a\x1b[2\x18b", "ab"},
		{"C0 inside CSI", "a\x1b[2\nJb", "ab"},
		{"BEL BS NUL DEL", "a\x07b\x08c\x00d\x7fe", "abcde"},
		{"bidi overrides", "a\u202eb\u2066c\u2069d", "abcd"},
		{"vt ff", "a\x0bb\x0cc", "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Strip(tt.in); got != tt.want {
				t.Errorf("Strip(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "one line", "one line"},
		{"empty", "", ""},
		{"only space", " \t\n ", ""},
		{"folded", "  a \n\n\tb\r\nc  ", "a b c"},
		{"unicode space", "a\u00a0\u2028b", "a b"},
		{"the measured attack", attack, "Approve?red done"},
		{"escape between words", "a\x1b[2J b", "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.want {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 4, "abc…"},
		{"ab def", 4, "ab…"},
		{"日本語です", 3, "日本…"},
		{"a\x1b]0;t\x07bcdef", 3, "ab…"},
		{"abc", 0, ""},
	}
	for _, tt := range tests {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestStripUnchangedIsSameString checks the fast path: clean text is
// returned without a copy.
func TestStripUnchangedIsSameString(t *testing.T) {
	s := strings.Repeat("plain text, ünïcödé ✓\n", 10)
	if got := Strip(s); got != s {
		t.Fatalf("Strip changed clean text: %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { Strip(s) }); n != 0 {
		t.Errorf("Strip of clean text allocates %v times", n)
	}
}

// checkSafe fails when out could still drive a terminal.
func checkSafe(t *testing.T, in, out string, allowNL bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output of %q is not valid UTF-8: %q", in, out)
	}
	for i := 0; i < len(out); i++ {
		c := out[i]
		if c < 0x20 && !(allowNL && (c == '\n' || c == '\t')) || c == 0x7f {
			t.Fatalf("output of %q has byte %#x: %q", in, c, out)
		}
	}
	for _, r := range out {
		if r >= 0x80 && r < 0xa0 || isBidi(r) {
			t.Fatalf("output of %q has %U: %q", in, r, out)
		}
	}
}

// printable reports whether every rune of s is kept as it is by Strip.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 || isBidi(r) {
			return false
		}
	}
	return true
}

func FuzzStrip(f *testing.F) {
	for _, s := range []string{
		attack, "", "plain", "a\r\nb", "\x1b]0;\u0153\x07", "\x1b[", "\x1b]", "\u009b", "\x9b", "\x1bP\x1b\\",
		"日本\t語", "a\u202eb", "  x  y ", "\xff\xfe", "\x1b\x1b\x1b", "\u009d\u009c", "\r", "\x1b[2\x18",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s := Strip(in)
		checkSafe(t, in, s, true)
		if Strip(s) != s {
			t.Fatalf("Strip is not idempotent on %q: %q then %q", in, s, Strip(s))
		}
		if printable(in) && s != in {
			t.Fatalf("Strip changed printable text %q to %q", in, s)
		}
		if len(s) > 3*len(in) {
			t.Fatalf("Strip grew %q to %q", in, s)
		}

		l := Line(in)
		checkSafe(t, in, l, false)
		if Line(l) != l {
			t.Fatalf("Line is not idempotent on %q: %q then %q", in, l, Line(l))
		}
		if Line(s) != l {
			t.Fatalf("Line(Strip(%q)) = %q, Line = %q", in, Line(s), l)
		}
		if strings.Contains(l, "  ") || strings.TrimSpace(l) != l {
			t.Fatalf("Line(%q) = %q has unfolded space", in, l)
		}

		c := Clip(in, 10)
		checkSafe(t, in, c, false)
		if utf8.RuneCountInString(c) > 10 {
			t.Fatalf("Clip(%q, 10) = %q is longer than 10 runes", in, c)
		}
		if Clip(c, 10) != c {
			t.Fatalf("Clip is not idempotent on %q: %q then %q", in, c, Clip(c, 10))
		}
	})
}

func BenchmarkStrip(b *testing.B) {
	clean := strings.Repeat("Claude needs your permission to use Bash: make test ", 4)
	for _, bc := range []struct{ name, in string }{{"clean", clean}, {"attack", attack + clean}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				Strip(bc.in)
			}
		})
	}
}

func TestRow(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain  text ", "plain  text "},
		{"\x1b[31mred\x1b[0m \x1b[1;38;2;1:2:3mbold\x1b[m", "\x1b[31mred\x1b[0m \x1b[1;38;2;1:2:3mbold\x1b[m"},
		{"a\x1b[2Jb\x1b[10;1Hc", "abc"},
		{"x\x1b]52;c;aGVsbG8=\x07y", "xy"},
		{"x\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "xlink"},
		{"tab\there\nnl\rcr", "tab here nl cr"},
		{"\x1b[?1049h\x1b[>4;1m\x1b[31;?m", ""},
		{"bidi\u202eevil", "bidievil"},
		{"\x9b31mc1\x9d0;t\x07", "c1"},
		{"bell\x07nul\x00", "bellnul"},
		{"数据库 🚀", "数据库 🚀"},
		{"bad\xffbyte", "bad\ufffdbyte"},
	} {
		if got := Row(tc.in); got != tc.want {
			t.Errorf("Row(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Row(Row(tc.in)); got != Row(tc.in) {
			t.Errorf("Row is not idempotent on %q: %q", tc.in, got)
		}
	}
}
