package launcher

import (
	"slices"
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	"agent --resume {session_id}",
	"agent --resume",
	"agent -r '{session_id}'",
	`agent -r "{session_id}"`,
	"agent --id={session_id}",
	`my\ agent $'a\tb' 'x'"y" # c`,
	"cd /w && agent -r {session_id} | tee log",
	"agent $(echo {session_id})",
	"agent `x` ${y:-z} $((1+2))",
	"agent 2>&1 >>log",
	"agent \\\n {session_id}",
	"agent 'unterminated",
	`agent \`,
	"(agent)",
	"agent <<EOF",
}

// FuzzLex checks that the lexer never panics and that its tokens are ordered,
// disjoint and faithful to the source.
func FuzzLex(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		toks, err := Lex(src)
		if err != nil {
			return
		}
		prev := 0
		for _, tk := range toks {
			if tk.Start < prev || tk.End <= tk.Start || tk.End > len(src) {
				t.Fatalf("bad token range %d..%d after %d in %q", tk.Start, tk.End, prev, src)
			}
			if src[tk.Start:tk.End] != tk.Raw {
				t.Fatalf("Raw %q != src[%d:%d] in %q", tk.Raw, tk.Start, tk.End, src)
			}
			prev = tk.End
		}
	})
}

func words(toks []Token) []string {
	var out []string
	for _, t := range toks {
		if t.Kind == Word {
			out = append(out, t.Value)
		}
	}
	return out
}

// FuzzTemplate checks that a valid template renders to a command that lexes
// with the id as exactly one word where the template put it, and that
// ShellQuote always yields one word with the original value.
func FuzzTemplate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "0b5a9a8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b")
		f.Add(s, "it's a $(trap) `x` \\ \"q\"\n#")
	}
	f.Fuzz(func(t *testing.T, src, id string) {
		q := ShellQuote(id)
		if !strings.ContainsRune(id, 0) {
			toks, err := Lex(q)
			if err != nil || len(toks) != 1 || toks[0].Kind != Word || toks[0].Value != id {
				t.Fatalf("Lex(ShellQuote(%q)) = %+v, %v; want one word", id, toks, err)
			}
		}
		tmpl, err := ParseTemplate(src)
		if err != nil {
			return
		}
		out, err := tmpl.Render(id)
		if id == "" || strings.ContainsRune(id, 0) {
			if err == nil {
				t.Fatalf("Render(%q) accepted a bad id", id)
			}
			return
		}
		if err != nil {
			t.Fatalf("Render(%q): %v", id, err)
		}
		srcToks, _ := Lex(src)
		var want []string
		for _, tk := range srcToks {
			if tk.Kind != Word {
				continue
			}
			if tk.Raw == Placeholder {
				want = append(want, id)
			} else {
				want = append(want, tk.Value)
			}
		}
		if !tmpl.HasPlaceholder() {
			want = append(want, id)
		}
		outToks, err := Lex(out)
		if err != nil {
			t.Fatalf("rendered %q does not lex: %v", out, err)
		}
		if got := words(outToks); !slices.Equal(got, want) {
			t.Fatalf("template %q id %q rendered %q: words %q, want %q", src, id, out, got, want)
		}
	})
}
