package hookevent

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportGraphStaysSmall guards the helper's start-up cost: agents run it
// on every hook, so it must not pull in the database, the command tree or
// the terminal UI (their package init would run for nothing), nor package
// net (see package early).
func TestImportGraphStaysSmall(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{"modernc.org/", "github.com/spf13/", "charm.land/", "github.com/charmbracelet/", "database/sql"} {
			if strings.HasPrefix(dep, bad) {
				t.Errorf("hookevent depends on %s", dep)
			}
		}
		// net depends on vendor/… packages, which sort last: with it,
		// package early would initialize after nearly everything else.
		if dep == "net" {
			t.Errorf("hookevent depends on net")
		}
	}
}
