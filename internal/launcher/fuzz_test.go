package launcher

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
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

// FuzzWords checks that parsing never panics and that the words are ordered,
// disjoint and faithful to the source.
func FuzzWords(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		words, err := Words(src)
		if err != nil {
			return
		}
		prev := 0
		for _, w := range words {
			if w.Start < prev || w.End <= w.Start || w.End > len(src) {
				t.Fatalf("bad word range %d..%d after %d in %q", w.Start, w.End, prev, src)
			}
			if src[w.Start:w.End] != w.Raw {
				t.Fatalf("Raw %q != src[%d:%d] in %q", w.Raw, w.Start, w.End, src)
			}
			prev = w.End
		}
	})
}

func values(words []Word) []string {
	var out []string
	for _, w := range words {
		out = append(out, w.Value)
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
		// The parser, like Muster's native ids, takes UTF-8 only.
		bad := id == "" || strings.ContainsAny(id, "\x00\r") || !utf8.ValidString(id)
		if !bad {
			words, err := Words(q)
			if err != nil || len(words) != 1 || words[0].Value != id {
				t.Fatalf("Words(ShellQuote(%q)) = %+v, %v; want one word", id, words, err)
			}
		}
		tmpl, err := ParseTemplate(src)
		if err != nil {
			return
		}
		out, err := tmpl.Render(id)
		if bad {
			if err == nil {
				t.Fatalf("Render(%q) accepted a bad id", id)
			}
			return
		}
		if err != nil {
			t.Fatalf("Render(%q): %v", id, err)
		}
		srcWords, _ := Words(src)
		var want []string
		for _, w := range srcWords {
			if w.Raw == Placeholder {
				want = append(want, id)
			} else {
				want = append(want, w.Value)
			}
		}
		if !tmpl.HasPlaceholder() {
			want = append(want, id)
		}
		outWords, err := Words(out)
		if err != nil {
			t.Fatalf("rendered %q does not parse: %v", out, err)
		}
		if got := values(outWords); !slices.Equal(got, want) {
			t.Fatalf("template %q id %q rendered %q: words %q, want %q", src, id, out, got, want)
		}
	})
}
