package termsignal

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

const benchSize = 1 << 20

// repeatTo repeats unit until the result is at least n bytes long.
func repeatTo(unit string, n int) []byte {
	return bytes.Repeat([]byte(unit), n/len(unit)+1)
}

// plainText is log-like ASCII with no escapes at all.
func plainText() []byte {
	return repeatTo("2026-11-30T10:54:01Z INFO compiling crate serde v1.0.219 (registry)\r\n", benchSize)
}

// colouredText looks like an agent TUI redrawing: SGR colours, cursor
// moves, synchronized output, box drawing and other UTF-8, no OSC.
func colouredText() []byte {
	return repeatTo("\x1b[?2026h\x1b[2K\x1b[1A\r\x1b[38;5;174m●\x1b[39m \x1b[1mRead\x1b[22m(internal/pane/pane.go) "+
		"\x1b[2m⎿  Read 214 lines\x1b[22m\r\n  \x1b[38;5;246m│\x1b[39m func (p *Pane) Write(b []byte) (int, error) {"+
		"\x1b[K\r\n\x1b[48;5;237m\x1b[38;5;231m❯ please write a file\x1b[39m\x1b[49m 日本語\x1b[?2026l\r\n", benchSize)
}

// oscHeavy is a stream dense in the sequences the scanner interprets:
// Codex spinner titles and status, progress, hyperlinks passed through.
func oscHeavy() []byte {
	return repeatTo("\x1b]0;⠋ repo-codex\x07working…\x1b]0;⠙ repo-codex\x07\x1b]7501;state=working:app=codex\x1b\\"+
		"\x1b]9;4;3;\x07see \x1b]8;;https://developers.openai.com/codex\x07docs\x1b]8;;\x07\r\n"+
		"\x1b]133;D;0\x07\x1b]777;notify;Claude Code;Claude needs your permission\x07", benchSize)
}

// realCaptures concatenates the real CLI output in testdata.
func realCaptures(b *testing.B) []byte {
	files, err := filepath.Glob(filepath.Join("testdata", "*.bin"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no captures in testdata: %v", err)
	}
	var all []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, data...)
	}
	return all
}

// benchFeed feeds in through one Scanner in 32 KiB reads, as a pane's
// reader does. Besides MB/s of wall time it reports cpu-MB/s, throughput
// per second of process CPU time, which a busy build machine distorts less.
func benchFeed(b *testing.B, in []byte) {
	b.Helper()
	s := New()
	out := make([]byte, 0, 64<<10)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	cpu0 := processCPU(b)
	n := 0
	for b.Loop() {
		for p := in; len(p) > 0; {
			k := min(len(p), 32<<10)
			out, _ = s.Feed(p[:k], out[:0])
			p = p[k:]
		}
		n++
	}
	if cpu := processCPU(b) - cpu0; cpu > 0 {
		b.ReportMetric(float64(n*len(in))/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}

// processCPU returns the user and system CPU time used by the process.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkFeedPlainText(b *testing.B)    { benchFeed(b, plainText()) }
func BenchmarkFeedColoured(b *testing.B)     { benchFeed(b, colouredText()) }
func BenchmarkFeedOSCHeavy(b *testing.B)     { benchFeed(b, oscHeavy()) }
func BenchmarkFeedRealCaptures(b *testing.B) { benchFeed(b, realCaptures(b)) }

// BenchmarkFeedVsAnsiParser runs the scanner and the x/ansi parser (which
// x/vt uses) over the same coloured input, alternately so that drift hits
// both, and reports how many times faster the scanner is.
func BenchmarkFeedVsAnsiParser(b *testing.B) {
	in := colouredText()
	s := New()
	p := ansi.NewParser()
	out := make([]byte, 0, 64<<10)
	var ours, theirs float64
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		ours += timeIt(func() { out, _ = s.Feed(in, out[:0]) })
		theirs += timeIt(func() { p.Parse(in) })
	}
	b.ReportMetric(theirs/ours, "x-ansi-parser")
}

func TestBenchInputs(t *testing.T) {
	// The synthetic inputs must exercise what their names say.
	tests := []struct {
		name      string
		in        []byte
		wantKinds []Kind
	}{
		{"plain", plainText(), nil},
		{"coloured", colouredText(), nil},
		{"osc heavy", oscHeavy(), []Kind{KindTitle, KindAgentStatus, KindProgress, KindPrompt, KindNotify}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, sigs := scan(tt.in)
			seen := map[Kind]bool{}
			for _, s := range sigs {
				seen[s.Kind] = true
			}
			for _, k := range tt.wantKinds {
				if !seen[k] {
					t.Errorf("no %v signal", k)
				}
			}
			if len(tt.wantKinds) == 0 && (len(sigs) != 0 || !bytes.Equal(out, tt.in)) {
				t.Errorf("changed by the scanner: %d signals", len(sigs))
			}
			if len(tt.wantKinds) > 0 && strings.Contains(string(out), "\x1b]0;") {
				t.Error("titles not stripped")
			}
		})
	}
}

func timeIt(f func()) float64 {
	start := time.Now()
	f()
	return float64(time.Since(start))
}
