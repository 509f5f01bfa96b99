package native

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
)

// checkRecords asserts what every turn record must satisfy.
func checkRecords(t *testing.T, recs []turnRecord) {
	t.Helper()
	for _, r := range recs {
		if r.Key == "" {
			t.Fatalf("record without a key: %+v", r)
		}
		switch r.Op {
		case opStart:
			if r.Kind != "" {
				t.Fatalf("start with a kind: %+v", r)
			}
		case opEnd:
			if r.Kind != proto.KindSucceeded && r.Kind != proto.KindFailed && r.Kind != proto.KindInterrupted {
				t.Fatalf("end with kind %q", r.Kind)
			}
		default:
			t.Fatalf("record with op %d", r.Op)
		}
	}
}

// fuzzLines feeds the lines of data to a fresh parser, twice, and checks
// that both passes agree and that the records are well formed.
func fuzzLines(t *testing.T, provider string, data []byte) {
	var runs [2][]turnRecord
	for i := range runs {
		p := newParser(provider)
		for l := range bytes.SplitSeq(data, []byte{'\n'}) {
			runs[i] = p.line(l, runs[i])
		}
	}
	checkRecords(t, runs[0])
	if diff := cmp.Diff(runs[0], runs[1]); diff != "" {
		t.Fatalf("two passes differ:\n%s", diff)
	}
}

func addTestdataSeeds(f *testing.F, files ...string) {
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join("testdata", file))
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

func FuzzClaudeLines(f *testing.F) {
	addTestdataSeeds(f, "claude-22222222.jsonl", "claude-d374eff7.jsonl")
	f.Add([]byte(`{"promptId":"p","type":"user","message":{"content":"<command-name>/x</command-name>"}}` + "\n" + `{"type":"assistant","isApiErrorMessage":true}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzLines(t, "claude", data) })
}

func FuzzCodexLines(f *testing.F) {
	addTestdataSeeds(f, "codex-01a22c19.jsonl", "codex-01a22c0e.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzLines(t, "codex", data) })
}

// FuzzTrackerChunks checks that the records of a transcript do not depend
// on where the reads split it.
func FuzzTrackerChunks(f *testing.F) {
	for _, file := range []string{"claude-22222222.jsonl", "codex-01a22c19.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			f.Fatal(err)
		}
		provider, _, _ := strings.Cut(file, "-")
		f.Add(provider, data, uint16(len(data)/3), uint16(len(data)/2))
	}
	f.Fuzz(func(t *testing.T, provider string, data []byte, a, b uint16) {
		if provider != "claude" && provider != "codex" {
			return
		}
		whole := newTracker(provider)
		whole.consume(data)
		want := append([]turnRecord(nil), whole.recs...)
		split := newTracker(provider)
		i, j := min(int(a), len(data)), min(int(b), len(data))
		if i > j {
			i, j = j, i
		}
		for _, part := range [][]byte{data[:i], data[i:j], data[j:]} {
			split.consume(part)
		}
		if diff := cmp.Diff(want, split.recs); diff != "" {
			t.Fatalf("split at %d, %d (-whole +split):\n%s", i, j, diff)
		}
		checkRecords(t, want)
	})
}

func FuzzTitleActivity(f *testing.F) {
	for _, s := range []string{"◇  Ready (repo-gemini)     ", "✦  Working… (x)", "✋  Action Required (x)", "⠋ repo-codex",
		"[ ! ] Action Required | repo-codex", "repo-codex", "", "\xe2\x9c", "⠋"} {
		for _, p := range []string{"gemini", "codex", "claude", ""} {
			f.Add(p, s)
		}
	}
	f.Fuzz(func(t *testing.T, provider, title string) {
		state, ok := TitleActivity(provider, title)
		switch state {
		case "", Working, Waiting, Attention:
		default:
			t.Fatalf("state %q", state)
		}
		if !ok && state != "" {
			t.Fatalf("state %q without ok", state)
		}
		if provider != "gemini" && provider != "codex" && ok {
			t.Fatalf("provider %q reads titles", provider)
		}
	})
}

// FuzzActivity scans arbitrary terminal output and folds its signals.
func FuzzActivity(f *testing.F) {
	for _, file := range []string{"claude-6.bin", "claude-8.bin", "codex-5.bin"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add("codex", data)
	}
	f.Add("gemini", []byte("\x1b]0;✋  Action Required\x07\x07\x1b]9;hi\x1b\\"))
	f.Fuzz(func(t *testing.T, provider string, data []byte) {
		var tr activityTracker
		tr.bell.Interval = DefaultBellInterval
		_, sigs := termsignal.New().Feed(data, nil)
		now := t0
		for _, sig := range sigs {
			now = now.Add(time.Millisecond)
			tr.apply(provider, sig, now)
			a := tr.cur
			switch a.State {
			case "", Working, Waiting, Attention:
			default:
				t.Fatalf("state %q", a.State)
			}
			for _, s := range []string{a.Evidence, a.Notification} {
				if len(s) > maxEvidence+len("…") || !utf8.ValidString(s) {
					t.Fatalf("text %q", s)
				}
			}
		}
	})
}

func FuzzParseCmdline(f *testing.F) {
	f.Add([]byte("node\x00/usr/bin/gemini\x00"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, raw []byte) {
		argv := parseCmdline(raw)
		if len(argv) > maxArgs {
			t.Fatalf("%d args", len(argv))
		}
		matchProvider(executables(), procInfo{Argv: argv})
	})
}

func FuzzParseProcArgs2(f *testing.F) {
	f.Add(procArgs(2, "/usr/local/bin/claude\x00\x00\x00\x00claude\x00--resume\x00HOME=/x\x00"))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, raw []byte) {
		argv := parseProcArgs2(raw)
		if len(argv) > maxArgs {
			t.Fatalf("%d args", len(argv))
		}
	})
}
