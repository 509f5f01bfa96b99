package native

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/transcript"
)

const benchPanes = 50

// benchFG is a ForegroundPGID that costs what the real one does (TIOCGPGRP
// on a PTY master) and reports pgid.
func benchFG(b *testing.B, pgid int) func() (int, error) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		b.Skip("no pty:", err)
	}
	b.Cleanup(func() { ptmx.Close(); tty.Close() })
	fd := int(ptmx.Fd())
	return func() (int, error) {
		unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return pgid, nil
	}
}

// reportCore reports the CPU share of one poll per second.
func reportCore(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e9*100, "%core@1Hz")
}

// BenchmarkPollIdleShells is one poll of 50 panes whose foreground is an
// ordinary process (this test binary, read from /proc like any other).
func BenchmarkPollIdleShells(b *testing.B) {
	e := New(Config{Events: emitFunc(func(context.Context, proto.Event) error { return nil })})
	fg := benchFG(b, os.Getpid())
	for i := range benchPanes {
		e.SurfaceStarted(Surface{ID: strconv.Itoa(i), Provider: "shell", PID: os.Getpid(), ForegroundPGID: fg})
	}
	ctx := b.Context()
	for b.Loop() {
		e.pollOnce(ctx)
	}
	reportCore(b)
}

// BenchmarkPollIdleAgents is one poll of 50 panes each running an idle
// Claude Code whose transcript is followed.
func BenchmarkPollIdleAgents(b *testing.B) { benchIdleAgents(b, benchPanes, false) }

// BenchmarkPollHookedAgents is one poll of 20 panes each running an idle
// Claude Code launched with its hooks, whose transcript the fusion rule
// follows (issue 10's budget: 1% of a core for 20 panes).
func BenchmarkPollHookedAgents(b *testing.B) { benchIdleAgents(b, 20, true) }

func benchIdleAgents(b *testing.B, panes int, hooked bool) {
	home := b.TempDir()
	env := transcript.Env{Home: home, Getenv: func(string) string { return "" }}
	e := New(Config{Events: emitFunc(func(context.Context, proto.Event) error { return nil }), Env: env})
	e.inspect = func(int) (procInfo, error) { return procInfo{Comm: "claude", Argv: []string{"claude"}}, nil }
	e.alive = func(int) bool { return true }
	e.cwdOf = func(int) string { return testCWD }
	data, err := os.ReadFile(filepath.Join("testdata", "claude-22222222.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(home, ".claude", "projects", "-work-repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range panes {
		id := "session-" + strconv.Itoa(i)
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), data, 0o644); err != nil {
			b.Fatal(err)
		}
		pgid := 1000 + i
		e.SurfaceStarted(Surface{ID: strconv.Itoa(i), Provider: "claude", PID: pgid, CWD: testCWD,
			ForegroundPGID: benchFG(b, pgid), NativeID: func() string { return id }, HooksInjected: hooked})
	}
	ctx := b.Context()
	e.pollOnce(ctx) // observe the agents
	e.pollOnce(ctx) // find and read their transcripts
	for _, s := range e.surfaces {
		if s.agent == nil || s.agent.tr == nil || s.agent.tr.path == "" {
			b.Fatal("transcript not followed")
		}
	}
	for b.Loop() {
		e.pollOnce(ctx)
	}
	reportCore(b)
}
