package providertest

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

// SeedScreens adds the recorded screens under each of dirs (text files:
// dialogs, limits) to the fuzz corpus, each cut down to the lines that p
// reads as it reads the whole screen, with runs of one character (rules)
// shortened: Go's minimizer is quadratic in an input's size, and whole
// screens of up to 2 KB kept it busy for the full minute on the first new
// input (7 executions in 60 s for one provider's). A screen p reads
// nothing in keeps its last lines.
func SeedScreens(f *testing.F, p provider.Provider, env transcript.Env, dirs ...string) {
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Ext(path) == ".txt" {
				b, _ := os.ReadFile(path)
				f.Add(shrinkScreen(p, env, string(b)))
			}
			return nil
		})
	}
}

// screenReading is what a provider reads on a screen.
type screenReading struct {
	dialog     provider.Dialog
	isDialog   bool
	limit      provider.Limit
	found      bool
	keys, cont string
}

func readScreen(p provider.Provider, env transcript.Env, screen string) screenReading {
	var r screenReading
	if dr, ok := p.(provider.DialogReader); ok {
		r.dialog, r.isDialog = dr.Dialog(screen)
	}
	if lf, ok := p.(provider.LimitFinder); ok {
		r.limit, r.found = lf.FindLimit(limitQuery(env, screen))
		r.keys, r.cont = lf.Continue(screen)
	}
	return r
}

func limitQuery(env transcript.Env, screen string) provider.LimitQuery {
	return provider.LimitQuery{Env: env, At: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC), Open: true, Screen: func() string { return screen }}
}

// shrinkScreen drops each line of screen, and shortens each run of one
// character, that p reads screen the same without; of a screen it reads
// nothing in (where any cut reads the same), it keeps the last ten lines.
func shrinkScreen(p provider.Provider, env transcript.Env, screen string) string {
	lines := strings.Split(screen, "\n")
	want := readScreen(p, env, screen)
	same := func(ls []string) bool {
		return reflect.DeepEqual(readScreen(p, env, strings.Join(ls, "\n")), want)
	}
	if !want.isDialog && !want.found {
		lines = lines[max(0, len(lines)-10):]
	}
	for i := 0; i < len(lines) && (want.isDialog || want.found); {
		if c := slices.Delete(slices.Clone(lines), i, i+1); same(c) {
			lines = c
		} else {
			i++
		}
	}
	for i := range lines {
		c := slices.Clone(lines)
		c[i] = squeeze(lines[i])
		if c[i] != lines[i] && same(c) {
			lines = c
		}
	}
	return strings.Join(lines, "\n")
}

// squeeze shortens each run of one character to three.
func squeeze(s string) string {
	var b strings.Builder
	var last rune
	run := 0
	for _, r := range s {
		if r == last {
			run++
		} else {
			last, run = r, 1
		}
		if run <= 3 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// FuzzScreen is the body of a provider's fuzz target for what it reads off
// its pane's screen (provider.DialogReader, provider.LimitFinder): screens
// come from a pane any program can print to. None may panic; a dialog it
// reads offers answers, each with the keys that pick it; reading the same
// screen again says the same.
func FuzzScreen(t *testing.T, p provider.Provider, env transcript.Env, screen string) {
	if dr, ok := p.(provider.DialogReader); ok {
		d, ok := dr.Dialog(screen)
		if ok {
			if len(d.Options) == 0 {
				t.Fatalf("a dialog with no answers: %+v", d)
			}
			for _, o := range d.Options {
				if o.Keys == "" {
					t.Fatalf("answer %q has no keys: %+v", o.Label, d)
				}
			}
		}
		again, okAgain := dr.Dialog(screen)
		if ok != okAgain || !sameDialog(d, again) {
			t.Fatalf("the same screen read twice: %+v then %+v", d, again)
		}
	}
	if lf, ok := p.(provider.LimitFinder); ok {
		lim, found := lf.FindLimit(limitQuery(env, screen))
		if found && lim.Evidence == "" {
			t.Fatalf("a limit found with no evidence: %+v", lim)
		}
		lf.Continue(screen)
	}
}

func sameDialog(a, b provider.Dialog) bool {
	if a.Question != b.Question || a.Subject != b.Subject || len(a.Options) != len(b.Options) {
		return false
	}
	for i := range a.Options {
		if a.Options[i] != b.Options[i] {
			return false
		}
	}
	return true
}
