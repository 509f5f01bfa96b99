package native

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/termsignal"
	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// FuzzTrackerChunks checks that the records of a transcript do not depend
// on where the reads split it.
func FuzzTrackerChunks(f *testing.F) {
	for _, file := range []string{"claude-22222222.jsonl", "codex-01a22c19.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			f.Fatal(err)
		}
		prov, _, _ := strings.Cut(file, "-")
		f.Add(prov, data, uint16(len(data)/3), uint16(len(data)/2))
	}
	f.Fuzz(func(t *testing.T, prov string, data []byte, a, b uint16) {
		if prov != "claude" && prov != "codex" {
			return
		}
		whole := newTracker(prov, transcript.Env{})
		whole.consume(data)
		want := append([]provider.Turn(nil), whole.recs...)
		split := newTracker(prov, transcript.Env{})
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
		providertest.CheckTurns(t, want)
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
