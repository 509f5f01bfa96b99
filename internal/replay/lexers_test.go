package replay

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

var updateLexers = flag.Bool("update-lexers", false, "rewrite chroma-lexers/ from the chroma in go.mod")

// chromaXML returns chroma's XML lexers (lexers/embedded in the chroma
// module go.mod pins), by file name.
func chromaXML(t *testing.T) map[string][]byte {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go tool on PATH to find chroma's module")
	}
	dir, err := exec.Command(goTool, "list", "-m", "-f", "{{.Dir}}", "github.com/alecthomas/chroma/v2").Output()
	if err != nil {
		t.Fatalf("go list chroma: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(dir)), "lexers", "embedded", "*.xml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no XML lexers in chroma's module (%v)", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// TestChromaLexersCopied: chroma-lexers/ holds exactly chroma's XML
// lexers; with -update-lexers it is rewritten.
func TestChromaLexersCopied(t *testing.T) {
	want := chromaXML(t)
	if *updateLexers {
		os.RemoveAll("chroma-lexers")
		if err := os.Mkdir("chroma-lexers", 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range want {
			if err := os.WriteFile(filepath.Join("chroma-lexers", name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := filepath.Glob("chroma-lexers/*.xml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Errorf("chroma-lexers/ has %d lexers, chroma %d (go generate ./internal/replay)", len(files), len(want))
	}
	for _, f := range files {
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[filepath.Base(f)]) {
			t.Errorf("%s is not chroma's (go generate ./internal/replay)", f)
		}
	}
}

// notCopied are chroma's lexers written in Go but for Go and markdown
// (chromago.go).
var notCopied = []string{
	"Caddyfile", "Caddyfile Directives", "Common Lisp", "EmacsLisp", "ERB", "Gemtext", "Genshi",
	"Genshi HTML", "Genshi Text", "Go HTML Template", "Haxe", "HTTP", "Markless", "PHTML", "Raku",
	"reStructuredText", "Svelte", "YAML+Jinja",
}

// TestCodeLexersMatchChromas: every name and alias chroma resolves to a
// lexer, and an extension of each, resolves to the same lexer here, but
// for the lexers that are not copied.
func TestCodeLexersMatchChromas(t *testing.T) {
	ours := codeLexers()
	for _, l := range lexers.GlobalLexerRegistry.Lexers {
		cfg := l.Config()
		keys := append([]string{cfg.Name}, cfg.Aliases...)
		// A fence's language is often an extension ("py", "rs"): one per
		// lexer, since each costs a match against every file pattern.
		for _, f := range cfg.Filenames {
			if ext, ok := strings.CutPrefix(f, "*."); ok && !strings.ContainsAny(ext, "*?[") {
				keys = append(keys, ext)
				break
			}
		}
		for _, k := range keys {
			theirs := lexers.Get(k)
			if slices.Contains(notCopied, theirs.Config().Name) {
				continue
			}
			got := ours.Get(k)
			if got == nil {
				t.Errorf("Get(%q): nothing, chroma has %s", k, theirs.Config().Name)
				continue
			}
			if got.Config().Name != theirs.Config().Name {
				t.Errorf("Get(%q) = %s, chroma has %s", k, got.Config().Name, theirs.Config().Name)
			}
		}
	}
}

// TestGoLexersAreChromas: the copied Go and markdown lexers tokenise as
// chroma's do, on Go sources of this package and markdown (front matter,
// fenced code in several languages, tables).
func TestGoLexersAreChromas(t *testing.T) {
	files := []string{
		"go:markdown.go", "go:chromago.go", "go:lexers_test.go",
		"markdown:../../ARCHITECTURE.md", "markdown:testdata/frontmatter.md",
	}
	for _, lf := range files {
		lang, f, _ := strings.Cut(lf, ":")
		ours, theirs := codeLexers().Get(lang), lexers.Get(lang)
		if ours == nil || ours.Config().Name != theirs.Config().Name {
			t.Fatalf("no %s lexer", lang)
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		a, err := chroma.Tokenise(ours, nil, string(src))
		if err != nil {
			t.Fatal(err)
		}
		b, err := chroma.Tokenise(theirs, nil, string(src))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Errorf("%s: the %s lexers disagree", f, lang)
		}
	}
}
