package hookevent

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkMap is the mapping alone: parse a real UserPromptSubmit and
// apply the state rules.
func BenchmarkMap(b *testing.B) {
	payload := []byte(readLinesB(b, "claude.jsonl", `"UserPromptSubmit"`)[0])
	st := &State{}
	for b.Loop() {
		if _, err := Map("claude", payload, st, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunInProcess is one whole invocation minus process start: read
// stdin, parse, lock and write the state file, connect, send, read the
// reply, against an in-process events socket. bench/hook.sh measures the
// whole process.
func BenchmarkRunInProcess(b *testing.B) {
	srv := startServer(b, filepath.Join(shortDir(b), "events.sock"))
	payload := readLinesB(b, "claude.jsonl", `"UserPromptSubmit"`)[0]
	env := paneEnv(srv.path)
	state := StateDir(srv.path)
	for b.Loop() {
		b.StopTimer()
		os.RemoveAll(state) // every run is the first prompt of its turn, so it sends
		b.StartTimer()
		Run([]string{"claude"}, Options{
			Stdin: strings.NewReader(payload), Stdout: io.Discard, Stderr: io.Discard,
			Getenv: env, Now: time.Now,
		})
	}
}

func readLinesB(b *testing.B, file, contains string) []string {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, contains) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		b.Fatalf("no %q in %s", contains, file)
	}
	return out
}
