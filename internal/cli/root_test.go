package cli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/musterhq/muster/internal/iostreams"
)

// TestCommandTree pins every command, alias, argument check and flag, so
// that moving commands between files or changing how they are added shows
// up as a diff of what users can type.
func TestCommandTree(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	root := NewRootCmd(&Factory{IO: ios, Getenv: func(string) string { return "" }})
	var b strings.Builder
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		fmt.Fprintf(&b, "%s", c.CommandPath())
		if len(c.Aliases) > 0 {
			fmt.Fprintf(&b, " (aliases %s)", strings.Join(c.Aliases, ", "))
		}
		if c.Hidden {
			b.WriteString(" hidden")
		}
		if c.Runnable() {
			b.WriteString(" runnable")
		}
		fmt.Fprintf(&b, ": %s\n", c.Short)
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			short := ""
			if fl.Shorthand != "" {
				short = "-" + fl.Shorthand + ", "
			}
			hidden := ""
			if fl.Hidden {
				hidden = " hidden"
			}
			fmt.Fprintf(&b, "  %s--%s %s = %q%s\n", short, fl.Name, fl.Value.Type(), fl.DefValue, hidden)
		})
		cmds := c.Commands()
		slices.SortFunc(cmds, func(x, y *cobra.Command) int { return strings.Compare(x.Name(), y.Name()) })
		for _, sub := range cmds {
			walk(sub)
		}
	}
	walk(root)
	checkGolden(t, b.String())
}

// TestCommandsAreAddedInOnePlace: commands are listed in NewRootCmd, not
// added by init functions through package state.
func TestCommandsAreAddedInOnePlace(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == "init" {
					t.Errorf("%s: func init; add commands in NewRootCmd", fset.Position(d.Pos()))
				}
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, spec := range d.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						// Version is set by the linker; _ only asserts an
						// interface at compile time and holds nothing.
						if n.Name != "Version" && n.Name != "_" {
							t.Errorf("%s: package variable %s; commands get what they need from the Factory", fset.Position(n.Pos()), n.Name)
						}
					}
				}
			}
		}
	}
}

// TestOneFilePerCommand: each command's builder is in the file named by
// its path (`hooks status` in hooks_status.go), alone with its helpers.
func TestOneFilePerCommand(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	builders := map[string]string{} // builder -> file
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var here []string
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "new") && strings.HasSuffix(fn.Name.Name, "Cmd") {
				here = append(here, fn.Name.Name)
				builders[fn.Name.Name] = name
			}
		}
		if len(here) > 1 {
			t.Errorf("%s builds %d commands (%s); give each its own file", name, len(here), strings.Join(here, ", "))
		}
	}
	ios, _, _, _ := iostreams.Test()
	root := NewRootCmd(&Factory{IO: ios, Getenv: func(string) string { return "" }})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if c == root && (sub.Name() == "help" || sub.Name() == "completion") {
				continue // cobra's own
			}
			path := strings.Fields(sub.CommandPath())[1:]
			want := strings.Join(path, "_") + ".go"
			builder := "new"
			for _, p := range path {
				builder += strings.ToUpper(p[:1]) + p[1:]
			}
			builder += "Cmd"
			if got, ok := builders[builder]; !ok || got != want {
				t.Errorf("%s: %s is in %q, want %s", sub.CommandPath(), builder, got, want)
			}
			walk(sub)
		}
	}
	walk(root)
}
