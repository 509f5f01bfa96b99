package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// layers is ARCHITECTURE.md's table of packages by layer, top first: a
// package imports only packages of its own layer or of a lower one.
// TestLayerTableIsTheArchitecturePage keeps the page and this table one;
// TestEveryPackageHasALayer makes a new package choose its place.
// "provider/<name>" stands for every provider's own packages.
var layers = []struct {
	name     string
	packages []string
}{
	{"commands", []string{"cmd/muster", "cmd/muster-hook"}},
	{"user interface", []string{"cli", "tui", "web", "client", "host"}},
	{"server", []string{"daemon"}},
	{"engines", []string{"events", "native", "proccost", "worktree", "history", "stats", "replay", "replay/diff", "replay/gfm"}},
	{"hook path", []string{"hookevent", "hookinstall", "nativeid", "hookroute"}},
	{"agent knowledge", []string{"provider", "provider/all", "provider/all/hooks", "provider/hookmap", "provider/<name>"}},
	{"terminals", []string{"pane", "emulator", "termsignal", "attachterm"}},
	{"state", []string{"store", "runstate", "capability", "panepeer"}},
	{"vocabulary", []string{"proto", "paths", "transcript", "launcher", "termtext", "redact", "unixsock", "iostreams", "config", "blob", "keyname", "rawio", "procfs", "third_party/xterm"}},
}

// testOnly are the packages that exist for tests and may import anything.
func testOnly(path string) bool {
	return strings.HasPrefix(path, "internal/testing/") || path == "internal/archtest" ||
		strings.HasPrefix(path, "e2e/") || strings.HasPrefix(path, "bench/")
}

// layerOf is the index in layers of a package (its path below the
// module), or -1.
func layerOf(path string) int {
	name := strings.TrimPrefix(path, "internal/")
	for i, l := range layers {
		for _, p := range l.packages {
			if p == name {
				return i
			}
		}
	}
	if isProviderImpl(module + "/" + path) {
		return slices.IndexFunc(layers, func(l struct {
			name     string
			packages []string
		}) bool {
			return slices.Contains(l.packages, "provider/<name>")
		})
	}
	return -1
}

func TestEveryPackageHasALayer(t *testing.T) {
	for _, p := range listPackages(t) {
		path := short(p.ImportPath)
		if !testOnly(path) && layerOf(path) < 0 {
			t.Errorf("%s is in no layer: add it to ARCHITECTURE.md's table and to layers here", path)
		}
	}
}

func TestImportsStayInTheirLayerOrBelow(t *testing.T) {
	for _, p := range listPackages(t) {
		from := short(p.ImportPath)
		if testOnly(from) {
			continue
		}
		lf := layerOf(from)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := short(imp)
			if lt := layerOf(to); lf >= 0 && lt >= 0 && lt < lf {
				t.Errorf("%s (%s) imports %s (%s), a higher layer", from, layers[lf].name, to, layers[lt].name)
			}
		}
	}
}

// TestLayerTableIsTheArchitecturePage reads the table of ARCHITECTURE.md:
// its rows, their order and the packages in each must be layers'.
func TestLayerTableIsTheArchitecturePage(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`^\| ([a-z ]+) \| (.*?) \| .* \|$`)
	pkg := regexp.MustCompile("`([a-z_/<>-]+)`")
	var got []string
	for _, line := range strings.Split(string(page), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil || m[1] == "layer" {
			continue
		}
		var names []string
		for _, n := range pkg.FindAllStringSubmatch(m[2], -1) {
			names = append(names, n[1])
		}
		got = append(got, m[1]+": "+strings.Join(names, " "))
	}
	var want []string
	for _, l := range layers {
		want = append(want, l.name+": "+strings.Join(l.packages, " "))
	}
	if !slices.Equal(got, want) {
		t.Errorf("ARCHITECTURE.md's layer table:\n%s\nwant (internal/archtest layers):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
