package providertest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
)

// maxTurnLine is the longest line the daemon's turn reader hands on.
const maxTurnLine = 16 << 20

// ParseTurns runs a fresh turn parser of r over a transcript file and
// renders the turns one a line (RenderTurns).
func ParseTurns(t testing.TB, r provider.TurnReader, path string) []string {
	t.Helper()
	return RenderTurns(fileTurns(t, r, path))
}

// ParseUsage is ParseTurns for the usage records (provider.TurnUsage),
// rendered as "usage TIME MODEL CONTEXT/WINDOW".
func ParseUsage(t testing.TB, r provider.TurnReader, path string) []string {
	t.Helper()
	return RenderUsage(fileTurns(t, r, path))
}

// fileTurns is what a fresh turn parser of r makes of a transcript file,
// line by line as the daemon's reader hands it on, checked (CheckTurns).
func fileTurns(t testing.TB, r provider.TurnReader, path string) []provider.Turn {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := r.NewTurnParser()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxTurnLine)
	var turns []provider.Turn
	for sc.Scan() {
		turns = p.Line(sc.Bytes(), turns)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	CheckTurns(t, turns)
	return turns
}

// LineUsage is LineTurns for the usage records.
func LineUsage(t testing.TB, r provider.TurnReader, lines ...string) []string {
	t.Helper()
	return RenderUsage(lineTurns(t, r, lines))
}

// RenderUsage renders the usage records of turns.
func RenderUsage(turns []provider.Turn) []string {
	var out []string
	for _, r := range turns {
		if r.Op == provider.TurnUsage {
			out = append(out, fmt.Sprintf("usage %s %q %d/%d", r.At.Format("15:04:05.000"), r.Usage.Model, r.Usage.Context, r.Usage.Window))
		}
	}
	return out
}

// LineTurns runs a fresh turn parser of r over lines and renders the
// turns.
func LineTurns(t testing.TB, r provider.TurnReader, lines ...string) []string {
	t.Helper()
	return RenderTurns(lineTurns(t, r, lines))
}

// lineTurns is what a fresh turn parser of r makes of lines, checked
// (CheckTurns).
func lineTurns(t testing.TB, r provider.TurnReader, lines []string) []provider.Turn {
	t.Helper()
	p := r.NewTurnParser()
	var turns []provider.Turn
	for _, l := range lines {
		turns = p.Line([]byte(l), turns)
	}
	CheckTurns(t, turns)
	return turns
}

// RenderTurns renders turns as "start KEY TIME TEXT" or "end KIND KEY TIME
// TEXT", with the key cut to 8 bytes and the time of day; usage records
// are left to RenderUsage.
func RenderTurns(turns []provider.Turn) []string {
	var out []string
	for _, r := range turns {
		if r.Op == provider.TurnUsage {
			continue
		}
		op := "start"
		if r.Op == provider.TurnEnd {
			op = "end " + string(r.Kind)
		}
		out = append(out, fmt.Sprintf("%s %.8s %s %q", op, r.Key, r.At.Format("15:04:05.000"), r.Text))
	}
	return out
}

// CheckTurns asserts what every turn must satisfy.
func CheckTurns(t testing.TB, turns []provider.Turn) {
	t.Helper()
	for _, r := range turns {
		if r.Op == provider.TurnUsage {
			u := r.Usage
			if r.Key != "" || r.Kind != "" || u == (provider.Usage{}) || u.Context < 0 || u.Window < 0 {
				t.Fatalf("bad usage record: %+v", r)
			}
			continue
		}
		if r.Key == "" {
			t.Fatalf("turn without a key: %+v", r)
		}
		switch r.Op {
		case provider.TurnStart:
			if r.Kind != "" {
				t.Fatalf("start with a kind: %+v", r)
			}
		case provider.TurnEnd:
			if r.Kind != proto.KindSucceeded && r.Kind != proto.KindFailed && r.Kind != proto.KindInterrupted {
				t.Fatalf("end with kind %q", r.Kind)
			}
		default:
			t.Fatalf("turn with op %d", r.Op)
		}
	}
}

// FuzzTurnLines feeds the lines of data to a fresh parser of r, twice, and
// checks that both passes agree and that the turns are well formed.
func FuzzTurnLines(t *testing.T, r provider.TurnReader, data []byte) {
	var runs [2][]provider.Turn
	for i := range runs {
		p := r.NewTurnParser()
		for l := range bytes.SplitSeq(data, []byte{'\n'}) {
			runs[i] = p.Line(l, runs[i])
		}
	}
	CheckTurns(t, runs[0])
	if diff := cmp.Diff(runs[0], runs[1]); diff != "" {
		t.Fatalf("two passes differ:\n%s", diff)
	}
}

// AddLineSeeds adds each file, and each of its lines shorter than 4 KiB, to
// the fuzz corpus.
func AddLineSeeds(f *testing.F, paths ...string) {
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		for l := range bytes.SplitSeq(data, []byte{'\n'}) {
			if len(l) < 4096 {
				f.Add(l)
			}
		}
	}
}
