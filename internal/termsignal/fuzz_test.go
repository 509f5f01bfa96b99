package termsignal

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzScanner(f *testing.F) {
	seeds := []string{
		osc + "0;✳ Claude Code\x07",
		osc + "2;a;b" + st,
		osc + "9;4;1;42\x07" + osc + "9;4;3;\x07",
		osc + "9;Claude needs your permission\x07" + osc + "9;9;/x\x07",
		osc + "777;notify;T;a;b\x07",
		osc + "99;i=1:d=0;T" + st + osc + "99;i=1:p=body:e=1;Qg==" + st + osc + "99;p=?;" + st,
		osc + "133;A\x07" + osc + "133;D;1;err=2\x07" + osc + "633;D\x07",
		osc + "7501;state=working:app=codex" + st + osc + "7501;?\x07",
		osc + "7;file://h/a%20b\x07",
		tmuxW + "\x1b\x1b]9;4;0;\x07" + st + tmuxW + "\x1b\x1bPtmux;\x1b\x1b\x1b\x1b]0;x\x07\x1b\x1b\\" + st,
		osc + "0;abc\x18" + osc + "0;abc\x1b[1m\x07" + osc + "8;;x\x1a",
		"\x1bP+q\x07" + st + "\x1b_G\x07" + st + "\x1b\x1b\x1b",
	}
	for _, s := range seeds {
		f.Add([]byte(s), []byte{1, 3, 7})
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.bin"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 2<<10)], []byte{5, 200, 13})
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		out, sigs := scan(data)

		// Reads of any size give the same result.
		var chunks [][]byte
		for p, i := data, 0; len(p) > 0; i++ {
			n := 1
			if len(cuts) > 0 {
				n = max(1, int(cuts[i%len(cuts)]))
			}
			n = min(n, len(p))
			chunks = append(chunks, p[:n])
			p = p[n:]
		}
		splitOut, splitSigs := scanChunks(chunks)
		if !bytes.Equal(out, splitOut) {
			t.Fatalf("split output %q, whole %q", splitOut, out)
		}
		if diff := cmp.Diff(sigs, splitSigs); diff != "" {
			t.Fatalf("split signals differ (-whole +split):\n%s", diff)
		}

		// The scanner only removes bytes: stripped sequences, tmux wrappers
		// and the doubling of ESC inside them. It never adds or reorders.
		if !isSubsequence(out, data) {
			t.Fatalf("output %q is not a subsequence of input %q", out, data)
		}
		if !bytes.Contains(data, []byte{esc}) {
			if !bytes.Equal(out, data) {
				t.Fatalf("input without ESC changed: %q -> %q", data, out)
			}
			if n := bytes.Count(data, []byte{bel}); n != len(sigs) {
				t.Fatalf("%d BEL gave %d signals", n, len(sigs))
			}
		}
		for _, s := range sigs {
			checkSignal(t, s)
		}
	})
}

// checkSignal fails on a signal whose fields break their documented ranges.
func checkSignal(t *testing.T, s Signal) {
	t.Helper()
	if s.Kind < KindTitle || s.Kind > KindStatusQuery {
		t.Fatalf("bad kind: %+v", s)
	}
	if s.Percent < -1 || s.Percent > 100 {
		t.Fatalf("percent out of range: %+v", s)
	}
	if s.ExitCode < -1 || s.ExitCode > 255 {
		t.Fatalf("exit code out of range: %+v", s)
	}
	if len(s.Raw) > MaxOSC {
		t.Fatalf("raw longer than MaxOSC: %d", len(s.Raw))
	}
	if s.OSC != 99 && strings.ContainsAny(s.Title+s.Body+s.Path+s.Raw, "\x07\x1b\x18\x1a") {
		t.Fatalf("terminator inside a signal: %+v", s)
	}
	if len(s.Title)+len(s.Body) > MaxOSC+maxNoteBytes {
		t.Fatalf("notification too long: %d", len(s.Title)+len(s.Body))
	}
	if s.Kind == KindBell && (s.OSC != -1 || s.Raw != "") {
		t.Fatalf("bad bell: %+v", s)
	}
}

func isSubsequence(sub, p []byte) bool {
	for _, b := range sub {
		i := bytes.IndexByte(p, b)
		if i < 0 {
			return false
		}
		p = p[i+1:]
	}
	return true
}
