package archtest

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/musterhq/muster"

type pkg struct {
	ImportPath string
	Name       string
	Doc        string
	Imports    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.Command(goTool, "list", "-json=ImportPath,Name,Doc,Imports", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func short(path string) string { return strings.TrimPrefix(path, module+"/") }

// TestEveryPackageSaysWhatItOwns: a newcomer reads the package doc first.
func TestEveryPackageSaysWhatItOwns(t *testing.T) {
	for _, p := range listPackages(t) {
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("%s has no package doc comment", short(p.ImportPath))
		}
	}
}

// isProviderImpl reports whether path is one provider's own package (or a
// package inside it), as opposed to internal/provider and
// internal/provider/hookmap, the shared vocabulary, and
// internal/provider/all and all/hooks, the registries.
func isProviderImpl(path string) bool {
	rest, ok := strings.CutPrefix(path, module+"/internal/provider/")
	return ok && rest != "all" && !strings.HasPrefix(rest, "all/") && rest != "hookmap"
}

// providerDebt lists the imports of individual provider packages that are
// left from before the provider interface existed. It is empty and may
// stay so: a new entry is a design decision to make in the provider
// package instead.
var providerDebt = map[string][]string{}

// providerFree are the packages that used to name providers and now reach
// them only through the registry (issue 14); TestProviderFreePackages
// keeps them so even if the general rule below is ever loosened.
var providerFree = []string{
	"internal/events", "internal/native", "internal/hookevent", "internal/hookinstall",
	"internal/nativeid", "internal/hookroute", "internal/cli", "internal/tui", "internal/daemon",
}

// TestProviderFreePackages: none of providerFree imports an individual
// provider package, and each still exists.
func TestProviderFreePackages(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		from := short(p.ImportPath)
		if !slices.Contains(providerFree, from) {
			continue
		}
		seen[from] = true
		for _, imp := range p.Imports {
			if isProviderImpl(imp) {
				t.Errorf("%s imports %s; ask internal/provider/all for the capability", from, short(imp))
			}
		}
	}
	for _, name := range providerFree {
		if !seen[name] {
			t.Errorf("%s no longer exists; update providerFree", name)
		}
	}
}

// TestProviderKnowledgeStaysInProviders: the rest of Muster reaches a
// provider only through internal/provider and internal/provider/all, so
// that adding a provider is one new package and one line in all.
func TestProviderKnowledgeStaysInProviders(t *testing.T) {
	for _, p := range listPackages(t) {
		from := short(p.ImportPath)
		if isProviderImpl(p.ImportPath) || strings.HasPrefix(from, "internal/provider/all") ||
			strings.HasPrefix(from, "e2e/") || strings.HasPrefix(from, "internal/testing/") || strings.HasPrefix(from, "bench/") {
			continue
		}
		for _, imp := range p.Imports {
			if !isProviderImpl(imp) {
				continue
			}
			if slices.Contains(providerDebt[from], short(imp)) {
				continue
			}
			t.Errorf("%s imports %s; go through internal/provider or internal/provider/all", from, short(imp))
		}
	}
}

// TestImportsFlowDown: the command layer (cli, its dashboard and web UI) and
// the daemon sit on top; nothing below may import them, and the shared
// vocabulary packages import nothing of Muster's beyond each other.
func TestImportsFlowDown(t *testing.T) {
	top := map[string][]string{ // package → who may import it
		"internal/cli":    {"cmd/muster"},
		"internal/daemon": {"internal/cli"},
		"internal/tui":    {"internal/cli"},
		"internal/web":    {"internal/cli"},
	}
	leaves := map[string][]string{ // package → the Muster packages it may import
		"internal/proto":      nil,
		"internal/paths":      nil,
		"internal/termtext":   nil,
		"internal/iostreams":  nil,
		"internal/unixsock":   nil,
		"internal/panepeer":   {"internal/procfs"},
		"internal/emulator":   nil,
		"internal/launcher":   nil,
		"internal/keyname":    nil,
		"internal/transcript": nil,
		"internal/runstate":   {"internal/proto"},
		// Linked into cmd/muster-hook: the vocabulary of hook mappings.
		"internal/provider/hookmap": nil,
		"internal/hookevent":        {"internal/paths", "internal/proto", "internal/termtext", "internal/provider/hookmap", "internal/provider/all/hooks"},
	}
	for _, p := range listPackages(t) {
		from := short(p.ImportPath)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := short(imp)
			if allowed, ok := top[to]; ok && !slices.Contains(allowed, from) && !strings.HasPrefix(from, "e2e/") {
				t.Errorf("%s imports %s, which only %v may import", from, to, allowed)
			}
			if allowed, ok := leaves[from]; ok && !slices.Contains(allowed, to) {
				t.Errorf("%s imports %s; it may import only %v of Muster's packages", from, to, allowed)
			}
		}
	}
}

// TestHookMappingsStayLight: a provider's hook subpackage
// (internal/provider/<name>/<name>hook) is linked into cmd/muster-hook, so
// of Muster it imports the mapping vocabulary only.
func TestHookMappingsStayLight(t *testing.T) {
	found := 0
	for _, p := range listPackages(t) {
		from := short(p.ImportPath)
		rest, ok := strings.CutPrefix(from, "internal/provider/")
		if !ok || !strings.HasSuffix(rest, "hook") || !strings.Contains(rest, "/") || strings.HasPrefix(rest, "all/") {
			continue
		}
		found++
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/") && short(imp) != "internal/provider/hookmap" {
				t.Errorf("%s imports %s; a hook mapping imports only internal/provider/hookmap of Muster's packages", from, short(imp))
			}
		}
	}
	if found == 0 {
		t.Error("no hook subpackage found")
	}
}
