package hookinstall

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzSetupRemove runs the setup, setup, remove sequence of the file-level
// round-trip tests on arbitrary bytes for each JSON provider, in memory (the
// first setup's backup is the input itself). It checks that nothing panics,
// that setup either refuses or yields a document whose status is installed,
// that the second setup changes no byte, and that remove gives the input's
// exact bytes back.
func FuzzSetupRemove(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for i, e := range entries {
		if b, err := os.ReadFile(filepath.Join("testdata", e.Name())); err == nil && e.Name() != "README.md" {
			f.Add(b, uint8(i))
		}
	}
	for i, s := range []string{``, `{}`, ` { } `, `{"hooks":{}}`, `{"hooks":{"Stop":[]}}`, `{"version":1}`,
		`{"a":[1,{"b":null}],"a":2}`, "{\r\n}", `{"hooks":{"SessionStart":[{"hooks":[]}]}}`, "/* c */{}//x",
		`{"hooks":{"Stop":[{"hooks":[{"command":"x # muster-hooks:v1"}]}]}}`} {
		f.Add([]byte(s), uint8(i))
	}
	providers := []*jsonSpec{jsonSpecOf("claude"), jsonSpecOf("codex"), jsonSpecOf("gemini"), jsonSpecOf("cursor")}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		s := providers[int(which)%len(providers)]
		out, hadOurs, err := s.setupText("f", data, true, memory{}, musterBin)
		if err != nil {
			return
		}
		if hadOurs {
			// Our own entries in the input are replaced, not kept, so the
			// input cannot come back; only the idempotence holds.
			again, _, err := s.setupText("f", []byte(out), true, memory{}, musterBin)
			if err != nil || again != out {
				t.Fatalf("second setup over ours: %v\n%q\n%q", err, out, again)
			}
			return
		}
		d, err := parseConfig("f", []byte(out), true, s.JSONC)
		if err != nil {
			t.Fatalf("setup wrote an unparsable file: %v\n%q", err, out)
		}
		var rep Report
		s.compare(d, musterBin, &rep)
		if rep.State != Installed {
			t.Fatalf("status after setup = %+v\n%q", rep, out)
		}
		mem := memoryFrom(data, true, s.JSONC)
		again, _, err := s.setupText("f", []byte(out), true, mem, musterBin)
		if err != nil || again != out {
			t.Fatalf("second setup changed the file: %v\n%q\n%q", err, out, again)
		}
		back, del, changed, err := s.removeText("f", []byte(out), mem, true)
		if err != nil || del || !changed {
			t.Fatalf("remove = %v %v %v\n%q", del, changed, err, out)
		}
		if back != string(data) {
			t.Fatalf("remove gave\n%q\nwant\n%q\nafter setup\n%q", back, data, out)
		}
	})
}
