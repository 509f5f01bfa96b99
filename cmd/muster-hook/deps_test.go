package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportGraphStaysSmall guards the hook path's start-up cost: agents run
// muster-hook on every hook, and every package it links initializes on
// every run. It may link the helper, the two small packages it shares
// with the daemon, termtext (standard library only, to strip escape
// sequences from messages), the hook mappings of the providers (one light
// subpackage per provider, their vocabulary hookmap and their registry
// all/hooks; never a transcript parser), and the standard library minus
// the heavy parts; the
// standard library share is capped near its size when this test was written
// (103 packages in all with Go 1.26), so that growth is a decision, not an
// accident.
func TestImportGraphStaysSmall(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/musterhq/muster/cmd/muster-hook":    true,
		"github.com/musterhq/muster/internal/hookevent": true,
		"github.com/musterhq/muster/internal/paths":     true,
		"github.com/musterhq/muster/internal/proto":     true,
		"github.com/musterhq/muster/internal/termtext":  true,

		"github.com/musterhq/muster/internal/provider/hookmap":               true,
		"github.com/musterhq/muster/internal/provider/all/hooks":             true,
		"github.com/musterhq/muster/internal/provider/claude/claudehook":     true,
		"github.com/musterhq/muster/internal/provider/codex/codexhook":       true,
		"github.com/musterhq/muster/internal/provider/cursor/cursorhook":     true,
		"github.com/musterhq/muster/internal/provider/gemini/geminihook":     true,
		"github.com/musterhq/muster/internal/provider/opencode/opencodehook": true,
	}
	heavy := []string{"net", "net/http", "os/exec", "os/user", "database/sql", "text/template", "html/template", "crypto/tls", "regexp", "log/slog"}
	std := 0
	for _, dep := range strings.Fields(string(out)) {
		if !strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") {
			std++
			for _, h := range heavy {
				if dep == h {
					t.Errorf("muster-hook links %s", dep)
				}
			}
			continue
		}
		if !allowed[dep] {
			t.Errorf("muster-hook links %s; the hook path may only link %v", dep, allowed)
		}
	}
	const limit = 110
	if std > limit {
		t.Errorf("muster-hook links %d standard packages, more than %d", std, limit)
	}
}
