package providertest

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/transcript"
)

// Shared is the repository's copy of the third-party fixtures and the
// real CLIs' captures (testdata/shared, see its README for their origin),
// as an absolute path so that any package's test can use it.
var Shared = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "shared")
}()

// Conformance parses the third-party fixtures and the real CLI's captures
// under Shared: every file parses without an error, and its summary scan
// agrees with its full parse.
type Conformance struct {
	// Roots are directories under Dir (Shared when empty); Match picks
	// the files.
	Dir   string
	Roots []string
	Match func(path string) bool
	// Min fails the test when fewer files are found; with 0, finding none
	// skips it.
	Min int
	// Parse parses one file (failing the test on an error).
	Parse func(t testing.TB, path string, opts transcript.ParseOptions) []*transcript.Transcript
	// Summary, when set, prepares a copy of a full parse's session before
	// it is compared with the summary's (summary scans read no images, so
	// image warnings may differ); SummaryOptions are cmp options for that
	// comparison.
	Summary        func(full *transcript.Session)
	SummaryOptions []cmp.Option
	// Check runs the provider's own checks on each file's full parse.
	Check func(t *testing.T, rel string, full []*transcript.Transcript)
}

// Files lists the files Run parses, skipping the test when Shared is
// missing or holds none and Min is 0.
func (c Conformance) Files(t testing.TB) []string {
	t.Helper()
	if _, err := os.Stat(c.dir()); err != nil {
		t.Fatalf("the repository's fixtures: %v", err)
	}
	var paths []string
	for _, root := range c.Roots {
		filepath.WalkDir(filepath.Join(c.dir(), root), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && c.Match(p) {
				paths = append(paths, p)
			}
			return nil
		})
	}
	switch {
	case len(paths) == 0:
		t.Fatalf("%s holds no files under %v", c.dir(), c.Roots)
	case len(paths) < c.Min:
		t.Fatalf("found only %d files under %v, want %d or more", len(paths), c.Roots, c.Min)
	}
	return paths
}

func (c Conformance) dir() string {
	if c.Dir == "" {
		return Shared
	}
	return c.Dir
}

// Run runs the conformance check, one subtest per file named by its path
// under Shared, and returns the full parses by that path.
func (c Conformance) Run(t *testing.T) map[string][]*transcript.Transcript {
	t.Helper()
	paths := c.Files(t)
	got := map[string][]*transcript.Transcript{}
	for _, p := range paths {
		rel, _ := filepath.Rel(c.dir(), p)
		rel = filepath.ToSlash(rel)
		t.Run(rel, func(t *testing.T) {
			full := c.Parse(t, p, transcript.ParseOptions{})
			sum := c.Parse(t, p, transcript.ParseOptions{SummaryOnly: true})
			if len(full) != len(sum) {
				t.Fatalf("full %d, summary %d transcripts", len(full), len(sum))
			}
			for i := range full {
				f := full[i].Session
				if c.Summary != nil {
					f.Warnings = append([]string(nil), f.Warnings...)
					c.Summary(&f)
				}
				if diff := cmp.Diff(f, sum[i].Session, c.SummaryOptions...); diff != "" {
					t.Fatalf("summary differs (-full +summary):\n%s", diff)
				}
			}
			got[rel] = full
			if c.Check != nil {
				c.Check(t, rel, full)
			}
		})
	}
	return got
}

// CheckTitled asserts that a transcript with prompts has a first prompt
// and a title.
func CheckTitled(t *testing.T, tr *transcript.Transcript) {
	t.Helper()
	if tr.PromptCount > 0 && (tr.FirstPrompt == "" || tr.Title == "") {
		t.Errorf("%d prompts but first prompt %q, title %q", tr.PromptCount, tr.FirstPrompt, tr.Title)
	}
}

// Expect compares the values files inspected by hand should give (want,
// by key) with what the parses gave (got); every key of want must have
// been parsed. W (a struct, or a pointer to one: nil for "no transcript")
// has its unexported fields compared too.
func Expect[W any](t *testing.T, want, got map[string]W, opts ...cmp.Option) {
	t.Helper()
	typ := reflect.TypeFor[W]()
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	opts = append(opts, cmp.AllowUnexported(reflect.New(typ).Elem().Interface()))
	for key, w := range want {
		t.Run("expected/"+key, func(t *testing.T) {
			g, ok := got[key]
			if !ok {
				t.Fatalf("%s not parsed", key)
			}
			if diff := cmp.Diff(w, g, opts...); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Repeatable asserts what a fuzzer checks of every input: two full parses
// agree, the result encodes as JSON (the web UI and --json send it), and
// the summary parse agrees with the full one by agree, which names what
// differs ("" when nothing does).
func Repeatable(t *testing.T, parse func(opts transcript.ParseOptions) []*transcript.Transcript, agree func(full, sum *transcript.Transcript) string) {
	t.Helper()
	first := parse(transcript.ParseOptions{})
	// reflect.DeepEqual, not cmp: it is much cheaper, and cmp only
	// explains a difference once there is one.
	if again := parse(transcript.ParseOptions{}); !reflect.DeepEqual(first, again) {
		t.Fatalf("second parse differs:\n%s", cmp.Diff(first, again))
	}
	if _, err := json.Marshal(first); err != nil {
		t.Fatalf("marshal: %v", err)
	}
	sum := parse(transcript.ParseOptions{SummaryOnly: true})
	if len(sum) != len(first) {
		t.Fatalf("summary has %d transcripts, full %d", len(sum), len(first))
	}
	for i := range first {
		if what := agree(first[i], sum[i]); what != "" {
			t.Fatalf("summary disagrees with the full parse on %s:\n%+v\n%+v", what, first[i].Session, sum[i].Session)
		}
	}
}

// Counts is an agreement for Repeatable: prompt and tool call counts and
// the first prompt.
func Counts(full, sum *transcript.Transcript) string {
	switch {
	case full.PromptCount != sum.PromptCount:
		return "PromptCount"
	case full.ToolCallCount != sum.ToolCallCount:
		return "ToolCallCount"
	case full.FirstPrompt != sum.FirstPrompt:
		return "FirstPrompt"
	}
	return ""
}

// SameSession is an agreement for Repeatable: the whole session but its
// warnings (summary scans read no images).
func SameSession(full, sum *transcript.Transcript) string {
	a, b := full.Session, sum.Session
	b.Warnings = a.Warnings
	if !reflect.DeepEqual(a, b) {
		return "the session: " + cmp.Diff(a, b)
	}
	return ""
}

// SeedRecords adds each line of a JSON-lines file, and each pair of
// consecutive lines, to the fuzz corpus, followed by args: whole files as
// seeds keep the minimizer, which is quadratic in an input's size, busy
// for its full minute on each new input.
func SeedRecords(f *testing.F, data []byte, args ...any) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i := range lines {
		f.Add(append([]any{lines[i]}, args...)...)
		if i+1 < len(lines) {
			f.Add(append([]any{bytes.Join(lines[i:i+2], nil)}, args...)...)
		}
	}
}

// BenchParse parses path with src in a loop, failing when ok rejects a
// result, and reports bytes per operation and MB per CPU second.
func BenchParse(b *testing.B, src transcript.Source, env transcript.Env, path string, opts transcript.ParseOptions, ok func([]*transcript.Transcript) bool) {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	runtime.GC()
	start := CPUTime()
	for b.Loop() {
		ts, err := src.Parse(b.Context(), env, path, opts)
		if err != nil || !ok(ts) {
			b.Fatalf("parse: %v", err)
		}
	}
	if cpu := CPUTime() - start; cpu > 0 {
		b.ReportMetric(float64(fi.Size())*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}
