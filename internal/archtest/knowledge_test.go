package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// providerWord finds a provider's name in code: "cursor" alone is an
// ordinary word (a terminal's cursor), so only its binary counts.
var providerWord = regexp.MustCompile(`(?i)\b(claude|codex|gemini|opencode)\b|cursor-agent`)

// knowledgeExempt are files outside internal/provider that may name a
// provider, each with its reason.
var knowledgeExempt = map[string]string{
	// Vendors' model names and list prices: a model is not a CLI (OpenCode
	// runs Claude and Gemini models), and the table is priced by model.
	"internal/stats/prices.go": "model prices",
}

// TestProviderNamesStayInProviders reads the code, not only the
// imports: no string literal or identifier outside internal/provider (and
// the test-only trees) names a provider, so that what one agent CLI does
// is written in its package and nowhere else (issue 21, point 4).
// Comments may name them: they say why.
func TestProviderNamesStayInProviders(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if info.IsDir() {
			switch {
			case rel == "internal/provider", strings.HasPrefix(rel, "internal/testing"), rel == "e2e", rel == "bench",
				rel == "third_party", rel == "internal/archtest", info.Name() == "testdata", rel != "." && strings.HasPrefix(info.Name(), "."):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || knowledgeExempt[rel] != "" {
			return nil
		}
		fs := token.NewFileSet()
		f, err := parser.ParseFile(fs, p, nil, 0)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BasicLit:
				if x.Kind == token.STRING && providerWord.MatchString(x.Value) {
					t.Errorf("%s:%d: a literal names a provider: %.60s", rel, fs.Position(x.Pos()).Line, x.Value)
				}
			case *ast.Ident:
				if providerWord.MatchString(splitWords(x.Name)) {
					t.Errorf("%s:%d: identifier %s names a provider", rel, fs.Position(x.Pos()).Line, x.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// splitWords turns camelCase into words, so that parseCodex matches.
func splitWords(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestOnlyProcfsReadsProc: /proc is parsed in one package (issue 21: it
// was parsed in 9 files of 7 packages, with 5 parsers of a stat line).
// Reopening one's own descriptor or binary (/proc/self/fd, /proc/self/exe)
// is not reading a process.
func TestOnlyProcfsReadsProc(t *testing.T) {
	root := filepath.Join("..", "..")
	filepath.Walk(filepath.Join(root, "internal"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/procfs/") || strings.HasPrefix(rel, "internal/testing/") {
			return nil
		}
		fs := token.NewFileSet()
		f, err := parser.ParseFile(fs, p, nil, 0)
		if err != nil {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if x, ok := n.(*ast.BasicLit); ok && x.Kind == token.STRING && strings.HasPrefix(strings.Trim(x.Value, "\"`"), "/proc") &&
				!strings.HasPrefix(strings.Trim(x.Value, "\"`"), "/proc/self/fd/") && strings.Trim(x.Value, "\"`") != "/proc/self/exe" {
				t.Errorf("%s:%d reads %s: ask internal/procfs", rel, fs.Position(x.Pos()).Line, x.Value)
			}
			return true
		})
		return nil
	})
}
