package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

// TestCommandsUseOnlyTableOps reads the CLI and the dashboard: every op
// they send is a proto.Op constant of an op in proto.Ops, never a string.
func TestCommandsUseOnlyTableOps(t *testing.T) {
	values := opConstants(t)
	calls := 0
	for _, dir := range []string{".", "../tui"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "proto" && strings.HasPrefix(n.Sel.Name, "Op") {
						v, ok := values[n.Sel.Name]
						if _, inTable := proto.Lookup(v); !ok || !inTable {
							t.Errorf("%s: proto.%s is not an op of proto.Ops", fset.Position(n.Pos()), n.Sel.Name)
						}
					}
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok || (sel.Sel.Name != "Call" && sel.Sel.Name != "call") {
						return true
					}
					calls++
					for _, arg := range n.Args {
						if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							t.Errorf("%s: op %s is a string; use its proto.Op constant", fset.Position(lit.Pos()), lit.Value)
						}
					}
				}
				return true
			})
		}
	}
	if calls < 10 {
		t.Errorf("found only %d daemon calls; is the test still looking in the right place?", calls)
	}
}

// opConstants reads the Op constants of proto's control.go.
func opConstants(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile("../proto/control.go")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "control.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) && strings.HasPrefix(n.Name, "Op") {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						out[n.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	}
	if len(out) != len(proto.Ops) {
		t.Fatalf("read %d Op constants for %d ops", len(out), len(proto.Ops))
	}
	return out
}
