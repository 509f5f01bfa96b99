package native

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/hookevent"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
)

const (
	shellPID  = 100
	agentPGID = 200
)

func promptD(code int) termsignal.Signal {
	return termsignal.Signal{Kind: termsignal.KindPrompt, OSC: 133, Mark: 'D', ExitCode: code, Raw: fmt.Sprintf("133;D;%d", code)}
}

// startClaudeInShell runs a shell pane and observes claude started in it.
func startClaudeInShell(h *harness, id string) *pane {
	h.t.Helper()
	h.procs.set(shellPID, "bash", "-bash")
	p := h.surface(id, "shell", shellPID)
	h.poll()
	if n := h.rec.count(); n != 0 {
		h.t.Fatalf("%d events for an idle shell", n)
	}
	h.procs.set(agentPGID, "claude", "claude", "--model", "x")
	p.fg(agentPGID)
	h.poll()
	if n := h.rec.count(); n != 0 {
		h.t.Fatalf("%d events for claude idle at its prompt", n)
	}
	working(h, id)
	return p
}

// working makes the agent in the pane report work (OSC 9;4 progress) for
// workGrace, which opens the coarse run of an agent whose turns are read
// when no transcript is followed.
func working(h *harness, id string) {
	h.t.Helper()
	h.e.Signals(id, []termsignal.Signal{progress(termsignal.ProgressIndeterminate)})
	h.poll()
	h.clk.Advance(workGrace)
	h.poll()
}

func TestCommandFinished(t *testing.T) {
	tests := []struct {
		name string
		code int
		want string
	}{
		{"exit 0", 0, "commandFinished succeeded R1 the agent exited with status 0"},
		{"exit 1", 1, "commandFinished failed R1 the agent exited with status 1"},
		{"ctrl-c", 130, "commandFinished interrupted R1 the agent exited with status 130 (signal 2)"},
		{"no status", -1, "commandFinished succeeded R1 the agent exited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			p := startClaudeInShell(h, "s1")
			h.poll() // still in the foreground: nothing new
			h.procs.kill(agentPGID)
			p.fg(shellPID)
			h.e.Signals("s1", []termsignal.Signal{promptD(tt.code)})
			h.poll()
			h.want("launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)", tt.want)
			h.poll()
			h.want("launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)", tt.want)
		})
	}
}

func TestDMarkBeforeLaunchIgnored(t *testing.T) {
	h := newHarness(t)
	h.procs.set(shellPID, "bash", "-bash")
	p := h.surface("s1", "shell", shellPID)
	h.e.Signals("s1", []termsignal.Signal{promptD(1)}) // the `ls` before claude
	h.poll()
	h.procs.set(agentPGID, "claude", "claude")
	p.fg(agentPGID)
	h.poll()
	working(h, "s1")
	h.procs.kill(agentPGID)
	p.fg(shellPID)
	h.poll() // no D for claude yet: wait for it
	h.poll()
	h.want("launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)")
	h.poll()
	h.want("launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)", "processExited succeeded R1 the agent exited")
}

func TestStoppedAgentKeepsItsRun(t *testing.T) {
	h := newHarness(t)
	p := startClaudeInShell(h, "s1")
	p.fg(shellPID) // ^Z: the shell is back, claude is stopped
	h.e.Signals("s1", []termsignal.Signal{promptD(148)})
	h.poll()
	h.poll()
	h.want("launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)")
	p.fg(agentPGID) // fg
	h.poll()
	h.procs.kill(agentPGID)
	p.fg(shellPID)
	h.e.Signals("s1", []termsignal.Signal{promptD(0)})
	h.poll()
	h.want("launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)", "commandFinished succeeded R1 the agent exited with status 0")
}

func TestRelaunchIsANewRun(t *testing.T) {
	h := newHarness(t)
	p := startClaudeInShell(h, "s1")
	h.procs.kill(agentPGID)
	p.fg(shellPID)
	h.e.Signals("s1", []termsignal.Signal{promptD(0)})
	h.poll()
	h.procs.set(agentPGID+1, "node", "node", "--no-warnings", "/usr/lib/node_modules/@openai/codex/bin/codex.js")
	p.fg(agentPGID + 1)
	h.poll()
	working(h, "s1")
	h.want(
		"launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)",
		"commandFinished succeeded R1 the agent exited with status 0",
		"launchObserved started R2 codex started (process group 201), working (OSC 9;4;3;)",
	)
	if v := h.rec.view(h.clk.Now()); v.State != proto.StateRunning || v.Run.Provider != "codex" {
		t.Errorf("session view %s %s, want running codex", v.State, v.Run.Provider)
	}
}

func TestFirstClassExit(t *testing.T) {
	tests := []struct {
		name string
		code int
		want string
	}{
		{"clean", 0, "processExited succeeded R1 the agent exited with status 0"},
		{"crash", 2, "processExited failed R1 the agent exited with status 2"},
		{"hangup", 129, "processExited interrupted R1 the agent exited with status 129 (signal 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			// Launched by muster as opencode; the executable is named otherwise.
			h.procs.set(300, "opencode-nightly", "/opt/opencode-nightly")
			p := h.surface("s1", "opencode", 300)
			h.poll()
			p.fail() // the PTY is gone before OnExit runs
			h.procs.kill(300)
			h.poll()
			h.poll()
			h.want("launchObserved started R1 opencode started (process group 300)")
			h.e.SurfaceExited(t.Context(), "s1", tt.code)
			h.want("launchObserved started R1 opencode started (process group 300)", tt.want)
			h.poll()
			h.e.SurfaceExited(t.Context(), "s1", tt.code)
			if n := h.rec.count(); n != 2 {
				t.Errorf("%d events after a second exit", n)
			}
			if a := h.e.Activity("s1"); a.State != "" || a.Evidence != "" {
				t.Errorf("activity of a closed surface %+v", a)
			}
		})
	}
}

func TestShellExitWithAgent(t *testing.T) {
	h := newHarness(t)
	startClaudeInShell(h, "s1")
	h.e.SurfaceExited(t.Context(), "s1", 0) // the shell's status says nothing about claude
	h.want("launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)", "processExited succeeded R1 the agent exited")
}

func TestNoEstimationWithHooks(t *testing.T) {
	t.Run("installed", func(t *testing.T) {
		h := newHarness(t)
		h.setHooks("claude", true)
		p := startClaudeInShell(h, "s1")
		h.e.Signals("s1", []termsignal.Signal{progress(termsignal.ProgressIndeterminate)})
		h.procs.kill(agentPGID)
		p.fg(shellPID)
		h.e.Signals("s1", []termsignal.Signal{promptD(0)})
		h.poll()
		h.want()
	})
	t.Run("injected", func(t *testing.T) {
		h := newHarness(t)
		h.procs.set(300, "claude", "claude")
		p := &pane{pgid: 300}
		h.e.SurfaceStarted(Surface{ID: "s1", Provider: "claude", PID: 300, ForegroundPGID: p.ForegroundPGID, HooksInjected: true})
		h.poll()
		h.e.Signals("s1", []termsignal.Signal{progress(termsignal.ProgressIndeterminate)})
		h.e.SurfaceExited(t.Context(), "s1", 0)
		h.want()
	})
	t.Run("other provider's hooks", func(t *testing.T) {
		h := newHarness(t)
		h.setHooks("codex", true)
		startClaudeInShell(h, "s1")
		h.want("launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)")
	})
}

func TestActivityThroughEstimator(t *testing.T) {
	h := newHarness(t)
	var got []string
	h.e.cfg.Listener = listenerFuncs{activity: func(id string, a Activity) { got = append(got, id+" "+a.State+" "+a.Evidence) }}
	p := startClaudeInShell(h, "s1")
	h.e.Signals("s1", []termsignal.Signal{progress(termsignal.ProgressIndeterminate)})
	h.e.Signals("s1", []termsignal.Signal{notify(777, "Claude Code", "Claude needs your permission")})
	if a := h.e.Activity("s1"); a.State != Attention || a.Notification != "Claude Code: Claude needs your permission" || !a.Since.Equal(h.clk.Now()) {
		t.Errorf("activity %+v", a)
	}
	h.procs.kill(agentPGID)
	p.fg(shellPID)
	h.e.Signals("s1", []termsignal.Signal{promptD(0)})
	h.poll()
	want := []string{"s1 working OSC 9;4;3;", "s1 attention OSC 777;notify;Claude Code;Claude needs your permission", "s1  agent exited"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("activity changes %q, want %q", got, want)
	}
	h.e.Signals("nope", []termsignal.Signal{bell})
	if a := h.e.Activity("nope"); a.State != "" || len(a.Recent) != 0 {
		t.Errorf("activity of an unknown surface %+v", a)
	}
}

// claudePath is where Claude Code keeps the transcript of session id for
// testCWD.
func (h *harness) claudePath(id string) string {
	return filepath.Join(h.home, ".claude", "projects", "-work-repo", id+".jsonl")
}

// isLine reports whether a transcript line is of the given kind, for
// growing.write's stop argument.
func isLine(subs ...string) func([]byte) bool {
	return func(l []byte) bool {
		for _, s := range subs {
			if !bytes.Contains(l, []byte(s)) {
				return false
			}
		}
		return true
	}
}

func TestClaudeTurnSplit(t *testing.T) {
	for _, byID := range []bool{false, true} {
		t.Run(fmt.Sprintf("native id %v", byID), func(t *testing.T) {
			h := newHarness(t)
			p := startClaudeInShell(h, "s1")
			if byID {
				p.setNativeID("22222222-2222-4333-8444-555555555555")
			}
			// Ten minutes pass before the first prompt: the coarse run must
			// not end as a long success (it would open an attention item).
			h.clk.Advance(10 * time.Minute)
			h.poll()
			g := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath("22222222-2222-4333-8444-555555555555"), h.clk.Now(), nil)
			g.write(0, isLine(`"promptId":"98e2235e`))
			h.poll()
			h.poll()
			v := h.rec.view(h.clk.Now())
			if v.State != proto.StateRunning || v.Run.RunID != hookevent.TurnRunID("claude", "98e2235e-cd31-4ed0-ba77-0128fde6b9f8") {
				t.Errorf("after the first prompt: %s %s, want the turn running", v.State, v.Run.RunID)
			}
			for g.write(1, nil) {
				h.poll()
			}
			h.poll()
			names := map[string]string{}
			for i, id := range []string{"98e2235e-cd31-4ed0-ba77-0128fde6b9f8", "f3e8eb71-0c1e-45a7-b9c0-1aab2a992b7c",
				"6cae53c4-9b30-4ee5-959a-61260a39c5f9", "af0b1a80-9d90-4c4d-b0f7-1d698e9937ee"} {
				names[hookevent.TurnRunID("claude", id)] = fmt.Sprintf("T%d", i+1)
			}
			want := []string{
				"launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)",
				"turnStarted started T1 say hi",
				"turnStarted succeeded R1 split into prompt turns",
				"turnCompleted succeeded T1 hi",
				"turnStarted started T2 say hi again",
				"turnCompleted succeeded T2 hi",
				"turnStarted started T3 please write a file",
				"turnCompleted succeeded T3 hi",
				"turnStarted started T4 please write a file",
				"turnCompleted interrupted T4 [Request interrupted by user for tool use]",
			}
			h.wantNamed(names, want...)
			if items := h.rec.items(h.clk.Now()); len(items) != 0 {
				t.Errorf("attention items %+v", items)
			}
			v = h.rec.view(h.clk.Now())
			if v.Run.RunID != hookevent.TurnRunID("claude", "af0b1a80-9d90-4c4d-b0f7-1d698e9937ee") || v.Run.State != proto.StateInterrupted {
				t.Errorf("current run %s %s, want T4 interrupted", v.Run.RunID, v.Run.State)
			}
			// Turn events carry the transcript's times.
			first := g.recordTimeOf(g.find(`"promptId":"98e2235e`))
			for _, ev := range h.rec.all() {
				if ev.HookName == HookTurnStarted && ev.Kind == proto.KindStarted && ev.Message == "say hi" && !ev.OccurredAt.Equal(first) {
					t.Errorf("turn T1 started at %v, want the prompt's %v", ev.OccurredAt, first)
				}
			}
			// Exiting with no open turn adds nothing.
			h.procs.kill(agentPGID)
			p.fg(shellPID)
			h.e.Signals("s1", []termsignal.Signal{promptD(0)})
			h.poll()
			h.wantNamed(names, want...)
		})
	}
}

func TestClaudeTurnOpenAtExit(t *testing.T) {
	h := newHarness(t)
	p := startClaudeInShell(h, "s1")
	p.setNativeID("d374eff7-6681-449d-ac7d-e8ad01a2744d")
	g := newGrowing(t, h.clk, "claude-d374eff7.jsonl", h.claudePath("d374eff7-6681-449d-ac7d-e8ad01a2744d"), h.clk.Now(), nil)
	g.write(0, isLine(`"promptId"`))
	h.poll()
	h.procs.kill(agentPGID)
	p.fg(shellPID)
	h.e.Signals("s1", []termsignal.Signal{promptD(130)})
	h.poll()
	h.want(
		"launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)",
		"turnStarted started R2 say hi",
		"turnStarted succeeded R1 split into prompt turns",
		"commandFinished interrupted R2 the agent exited with status 130 (signal 2) during the turn",
	)
}

func TestClaudeFailedTurnReadAtExit(t *testing.T) {
	h := newHarness(t)
	p := startClaudeInShell(h, "s1")
	p.setNativeID("d374eff7-6681-449d-ac7d-e8ad01a2744d")
	g := newGrowing(t, h.clk, "claude-d374eff7.jsonl", h.claudePath("d374eff7-6681-449d-ac7d-e8ad01a2744d"), h.clk.Now(), nil)
	g.write(0, isLine(`"promptId"`))
	h.poll()
	// The failure is written and claude exits before the next poll.
	g.write(100, nil)
	h.procs.kill(agentPGID)
	p.fg(shellPID)
	h.e.Signals("s1", []termsignal.Signal{promptD(0)})
	h.poll()
	h.want(
		"launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)",
		"turnStarted started R2 say hi",
		"turnStarted succeeded R1 split into prompt turns",
		"turnCompleted failed R2 API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)",
	)
	if items := h.rec.items(h.clk.Now()); len(items) != 1 || items[0].Reason != proto.KindFailed {
		t.Errorf("attention items %+v, want one for the failure", items)
	}
}

func TestResumedTranscriptHistoryIgnored(t *testing.T) {
	h := newHarness(t)
	// A transcript from an hour ago, resumed in a new pane.
	old := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath("22222222-2222-4333-8444-555555555555"), h.clk.Now().Add(-time.Hour), nil)
	old.write(0, isLine(`"subtype":"turn_duration"`))
	past := h.clk.Now().Add(-time.Hour)
	if err := os.Chtimes(old.path, past, past); err != nil {
		t.Fatal(err)
	}
	p := startClaudeInShell(h, "s1")
	p.setNativeID("22222222-2222-4333-8444-555555555555")
	h.poll()
	h.poll()
	h.want("launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)")
	// The resumed session's next prompt is new.
	f, err := os.OpenFile(old.path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := setJSON(old.find(`"promptId":"98e2235e`), "timestamp", h.clk.Now().Format(time.RFC3339Nano))
	line, _ = setJSON(line, "promptId", "new-prompt")
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	f.Close()
	h.poll()
	h.want(
		"launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)",
		"turnStarted started R2 say hi",
		"turnStarted succeeded R1 split into prompt turns",
	)
}

func TestAmbiguousTranscriptsNotGuessed(t *testing.T) {
	h := newHarness(t)
	h.procs.set(shellPID, "bash", "bash")
	h.procs.set(shellPID+1, "bash", "bash")
	h.procs.set(agentPGID, "claude", "claude")
	h.procs.set(agentPGID+1, "claude", "claude")
	p1 := h.surface("a", "shell", shellPID)
	p2 := h.surface("b", "shell", shellPID+1)
	p1.fg(agentPGID)
	p2.fg(agentPGID + 1)
	h.poll()
	h.e.Signals("a", []termsignal.Signal{progress(termsignal.ProgressIndeterminate)})
	working(h, "b")
	g1 := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath("22222222-2222-4333-8444-555555555555"), h.clk.Now(), nil)
	g2 := newGrowing(t, h.clk, "claude-d374eff7.jsonl", h.claudePath("d374eff7-6681-449d-ac7d-e8ad01a2744d"), h.clk.Now(), nil)
	g1.write(0, isLine(`"promptId"`))
	g2.write(0, isLine(`"promptId"`))
	h.poll()
	h.poll()
	if n := h.rec.count(); n != 2 {
		t.Fatalf("%d events, want the two launches only:\n%s", n, strings.Join(h.rec.lines(nil), "\n"))
	}
	// Once b's native id is known, both are told apart.
	p2.setNativeID("d374eff7-6681-449d-ac7d-e8ad01a2744d")
	h.poll()
	h.clk.Advance(locateEvery)
	h.poll()
	var got []string
	for _, ev := range h.rec.all() {
		if ev.HookName == HookTurnStarted && ev.Kind == proto.KindStarted {
			got = append(got, ev.SurfaceID.RawValue+" "+ev.Message)
		}
	}
	want := "b say hi|a say hi"
	if strings.Join(got, "|") != want {
		t.Errorf("turn starts %q, want %q", got, want)
	}
}

func TestClearFollowsTheNewTranscript(t *testing.T) {
	h := newHarness(t)
	startClaudeInShell(h, "s1")
	g1 := newGrowing(t, h.clk, "claude-d374eff7.jsonl", h.claudePath("d374eff7-6681-449d-ac7d-e8ad01a2744d"), h.clk.Now(), nil)
	g1.write(100, nil)
	h.clk.Advance(locateEvery)
	h.poll()
	h.clk.Advance(time.Minute)
	// /clear: a new session file in the same folder.
	g2 := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath("22222222-2222-4333-8444-555555555555"), h.clk.Now(), nil)
	g2.write(0, isLine(`"subtype":"turn_duration"`))
	h.clk.Advance(switchEvery)
	h.poll()
	h.want(
		"launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)",
		"turnStarted started R2 say hi",
		"turnStarted succeeded R1 split into prompt turns",
		"turnCompleted failed R2 API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)",
		"turnStarted started R3 say hi",
		"turnCompleted succeeded R3 hi",
	)
}

// codexRollout is where Codex writes a rollout of the fake clock's day.
func (h *harness) codexRollout(name string) string {
	d := h.clk.Now().Local()
	return filepath.Join(h.home, ".codex", "sessions", d.Format("2006"), d.Format("01"), d.Format("02"), name)
}

func TestCodexTurnSplit(t *testing.T) {
	h := newHarness(t)
	h.procs.set(shellPID, "zsh", "-zsh")
	p := h.surface("s1", "shell", shellPID)
	h.procs.set(agentPGID, "node", "node", "/usr/local/bin/codex", "--no-daemon")
	p.fg(agentPGID)
	h.poll()
	cwd := func(l []byte) []byte {
		out, _ := setJSON(l, "payload.cwd", testCWD)
		if !bytes.Contains(l, []byte(`"session_meta"`)) && !bytes.Contains(l, []byte(`"turn_context"`)) {
			return l
		}
		return out
	}
	g := newGrowing(t, h.clk, "codex-01a22c0e.jsonl", h.codexRollout("rollout-2026-11-30T10-45-04-01a22c0e-d041-74f3-b87b-104fada8e2f6.jsonl"), h.clk.Now(), cwd)
	for g.write(2, nil) {
		h.poll()
	}
	h.poll()
	names := map[string]string{
		hookevent.TurnRunID("codex", "01a22c0f-14a3-7a90-9612-9bf52be24129"): "T1",
		hookevent.TurnRunID("codex", "01a22c12-00a3-7b71-a374-9102d96c6820"): "T2",
		hookevent.TurnRunID("codex", "01a22c18-9825-7bd3-8ca4-695adec36c15"): "T3",
	}
	// Codex idle at its prompt had no run: the turns are the runs.
	h.wantNamed(names,
		"turnStarted started T1 prompt submitted",
		"turnCompleted interrupted T1 interrupted",
		"turnStarted started T2 prompt submitted",
		"turnCompleted interrupted T2 interrupted",
		"turnStarted started T3 prompt submitted",
		"turnCompleted interrupted T3 interrupted",
	)
}

func TestCodexRolloutOfAnotherDirectoryIgnored(t *testing.T) {
	h := newHarness(t)
	h.procs.set(shellPID, "zsh", "zsh")
	p := h.surface("s1", "shell", shellPID)
	h.procs.set(agentPGID, "codex", "codex")
	p.fg(agentPGID)
	h.poll()
	g := newGrowing(t, h.clk, "codex-01a22c19.jsonl", h.codexRollout("rollout-2026-11-30T10-56-27-01a22c19-5448-7d02-89e7-73b160cc00ef.jsonl"), h.clk.Now(), nil)
	g.write(100, nil) // its cwd is "$SCRATCH/repo-codex"
	h.poll()
	h.clk.Advance(locateEvery)
	h.poll()
	h.want() // idle, and the rollout is not its own
}

// TestRunIDsMatchHooks checks that a turn read from the transcript has the
// run id the hook helper gives the same turn, for the captured sessions
// where both the hooks and the transcript were recorded.
func TestRunIDsMatchHooks(t *testing.T) {
	tests := []struct {
		provider, hooks, transcript, rollout string
	}{
		{provider: "claude", hooks: "hooks-claude-22222222.jsonl", transcript: "claude-22222222.jsonl"},
		{provider: "codex", hooks: "hooks-codex-01a22c19.jsonl", transcript: "codex-01a22c19.jsonl",
			rollout: "rollout-2026-11-30T10-56-27-01a22c19-5448-7d02-89e7-73b160cc00ef.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			// What the hook helper sends.
			var st *hookevent.State
			hookRuns := map[string][]proto.EventKind{}
			var hookOrder []string
			now := t0
			for _, payload := range readLines(t, tt.hooks) {
				now = now.Add(time.Second)
				res, err := hookevent.Map(tt.provider, payload, st, now)
				if err != nil {
					t.Fatal(err)
				}
				if res.State != nil {
					st = res.State
				}
				for _, m := range res.Events {
					if _, ok := hookRuns[m.RunID.RawValue]; !ok {
						hookOrder = append(hookOrder, m.RunID.RawValue)
					}
					hookRuns[m.RunID.RawValue] = append(hookRuns[m.RunID.RawValue], m.Kind)
				}
			}
			if len(hookOrder) < 3 {
				t.Fatalf("only %d runs from the hooks", len(hookOrder))
			}
			// What the estimator reads from the transcript.
			h := newHarness(t)
			h.procs.set(agentPGID, tt.provider, tt.provider)
			p := h.surface("s1", tt.provider, agentPGID)
			h.poll()
			path := h.claudePath("22222222-2222-4333-8444-555555555555")
			p.setNativeID("22222222-2222-4333-8444-555555555555")
			if tt.rollout != "" {
				path = h.codexRollout(tt.rollout)
				p.setNativeID("01a22c19-5448-7d02-89e7-73b160cc00ef")
			}
			g := newGrowing(t, h.clk, tt.transcript, path, h.clk.Now(), nil)
			for g.write(3, nil) {
				h.poll()
			}
			h.poll()
			var order []string
			for _, ev := range h.rec.all() {
				if ev.HookName != HookTurnStarted || ev.Kind != proto.KindStarted {
					continue
				}
				order = append(order, ev.RunID.RawValue)
				if _, ok := hookRuns[ev.RunID.RawValue]; !ok {
					t.Errorf("turn run %s (%s) is not a run of the hooks", ev.RunID.RawValue, ev.Message)
				}
			}
			if strings.Join(order, " ") != strings.Join(hookOrder, " ") {
				t.Errorf("turn runs\n  %v\nhook runs\n  %v", order, hookOrder)
			}
			// Every turn the transcript completes, the hooks completed on the same run.
			for _, ev := range h.rec.all() {
				if ev.HookName == HookTurnCompleted && ev.Kind == proto.KindSucceeded {
					kinds := hookRuns[ev.RunID.RawValue]
					if len(kinds) == 0 || kinds[len(kinds)-1] != proto.KindSucceeded {
						t.Errorf("turn %s succeeded; the hooks said %v", ev.RunID.RawValue, kinds)
					}
				}
			}
		})
	}
}

func TestStandDown(t *testing.T) {
	t.Run("hook event before any turn", func(t *testing.T) {
		h := newHarness(t)
		p := startClaudeInShell(h, "s1")
		p.setNativeID("22222222-2222-4333-8444-555555555555")
		h.poll()
		launched := h.rec.all()[0].OccurredAt
		h.e.HookEventSeen("s1", "claude")
		h.poll()
		g := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath("22222222-2222-4333-8444-555555555555"), h.clk.Now(), nil)
		for g.write(5, nil) {
			h.poll()
		}
		h.procs.kill(agentPGID)
		p.fg(shellPID)
		h.e.Signals("s1", []termsignal.Signal{promptD(0)})
		h.poll()
		// The hooks report the turns; the transcript still ends the one
		// whose permission was denied, which no hook reports.
		h.want(
			"launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)",
			"hooksTookOver succeeded R1 the claude hooks report its runs now",
			"muster.transcript.turnEnded interrupted R2 [Request interrupted by user for tool use]",
		)
		if at := h.rec.all()[1].OccurredAt; !at.Equal(launched) {
			t.Errorf("coarse run ended at %v, want its last event %v", at, launched)
		}
		// A claude started again in the pane is left to the hooks too.
		h.procs.set(agentPGID+1, "claude", "claude")
		p.fg(agentPGID + 1)
		h.poll()
		if n := h.rec.count(); n != 3 {
			t.Errorf("%d events after the hooks took over", n)
		}
	})
	t.Run("hooks installed mid-turn", func(t *testing.T) {
		h := newHarness(t)
		p := startClaudeInShell(h, "s1")
		p.setNativeID("22222222-2222-4333-8444-555555555555")
		g := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath("22222222-2222-4333-8444-555555555555"), h.clk.Now(), nil)
		g.write(0, isLine(`"promptId":"98e2235e`))
		h.poll()
		h.setHooks("claude", true)
		for g.write(5, nil) {
			h.poll()
		}
		h.e.SurfaceExited(t.Context(), "s1", 0)
		h.want(
			"launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)",
			"turnStarted started R2 say hi",
			"turnStarted succeeded R1 split into prompt turns",
			"muster.transcript.turnEnded interrupted R3 [Request interrupted by user for tool use]",
		)
	})
	t.Run("another provider's hook event", func(t *testing.T) {
		h := newHarness(t)
		startClaudeInShell(h, "s1")
		h.e.HookEventSeen("s1", "codex")
		h.e.HookEventSeen("nope", "claude")
		h.poll()
		h.want("launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)")
	})
}

func TestSurfaceStartedTwice(t *testing.T) {
	h := newHarness(t)
	h.procs.set(agentPGID, "claude", "claude")
	p := h.surface("s1", "claude", agentPGID)
	h.e.SurfaceStarted(Surface{ID: "s1", PID: 1, ForegroundPGID: func() (int, error) { return 1, nil }})
	h.e.SurfaceStarted(Surface{}) // no id: ignored
	h.poll()
	working(h, "s1")
	h.want("launchObserved started R1 claude started (process group 200), working (OSC 9;4;3;)")
	_ = p
}

// TestIdleAgentHasNoRun: a hook-less Claude Code at its prompt or at a
// start-up dialog is idle, not running (issue 10): no run opens until a
// prompt starts a turn or its terminal says it works, and one that exits
// idle leaves nothing behind.
func TestIdleAgentHasNoRun(t *testing.T) {
	h := newHarness(t)
	h.procs.set(shellPID, "bash", "-bash")
	p := h.surface("s1", "shell", shellPID)
	h.procs.set(agentPGID, "claude", "claude")
	p.fg(agentPGID)
	for range 5 {
		h.poll()
	}
	h.e.Signals("s1", []termsignal.Signal{title("✳ Claude Code")}) // its only signal at a dialog
	h.poll()
	h.want()
	// A moment of work (the prompt is being submitted) opens nothing: the
	// transcript says which turn it is a poll later.
	h.e.Signals("s1", []termsignal.Signal{progress(termsignal.ProgressIndeterminate)})
	h.poll()
	h.want()
	h.e.Signals("s1", []termsignal.Signal{progress(termsignal.ProgressRemove)})
	if v := h.rec.view(h.clk.Now()); v.HasRun {
		t.Errorf("idle claude has a run: %+v", v.Run)
	}
	// Its first prompt starts a turn directly: there is no coarse run to split.
	p.setNativeID("22222222-2222-4333-8444-555555555555")
	g := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath("22222222-2222-4333-8444-555555555555"), h.clk.Now(), nil)
	g.write(0, isLine(`"promptId"`))
	h.poll()
	h.wantNamed(map[string]string{hookevent.TurnRunID("claude", "98e2235e-cd31-4ed0-ba77-0128fde6b9f8"): "T1"}, "turnStarted started T1 say hi")
	// Work reported while a turn is open opens nothing else.
	h.e.Signals("s1", []termsignal.Signal{progress(termsignal.ProgressIndeterminate)})
	h.poll()
	if n := h.rec.count(); n != 1 {
		t.Errorf("%d events after progress during a turn", n)
	}

	// Work while its transcript is followed opens nothing either: the
	// transcript will say.
	h3 := newHarness(t)
	h3.procs.set(shellPID, "bash", "-bash")
	p3 := h3.surface("s1", "shell", shellPID)
	h3.procs.set(agentPGID, "claude", "claude")
	p3.setNativeID("22222222-2222-4333-8444-555555555555")
	g3 := newGrowing(t, h3.clk, "claude-22222222.jsonl", h3.claudePath("22222222-2222-4333-8444-555555555555"), h3.clk.Now(), nil)
	g3.write(1, nil) // the session's first record, no prompt yet
	p3.fg(agentPGID)
	h3.poll()
	working(h3, "s1")
	h3.want()

	// An idle claude that exits leaves no run.
	h2 := newHarness(t)
	h2.procs.set(shellPID, "bash", "-bash")
	p2 := h2.surface("s1", "shell", shellPID)
	h2.procs.set(agentPGID, "claude", "claude")
	p2.fg(agentPGID)
	h2.poll()
	h2.procs.kill(agentPGID)
	p2.fg(shellPID)
	h2.e.Signals("s1", []termsignal.Signal{promptD(0)})
	h2.poll()
	h2.want()
}

// TestHostileTranscriptNotedForExplain: a transcript the agent's pane
// follows that is swapped for a FIFO (or a symbolic link loop) is
// skipped, never waited on, and its note is in the pane's Activity, which
// `muster explain` prints; so is a line over maxLine. (A hostile file is
// never located in the first place: locators list regular files only.)
func TestHostileTranscriptNotedForExplain(t *testing.T) {
	for _, kind := range []string{"fifo", "loop", "long line"} {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t)
			p := startClaudeInShell(h, "s1")
			const id = "22222222-2222-4333-8444-555555555555"
			p.setNativeID(id)
			path := h.claudePath(id)
			os.MkdirAll(filepath.Dir(path), 0o755)
			want := "not a regular file"
			if kind != "long line" {
				// Followed first, then swapped.
				os.WriteFile(path, []byte(`{"type":"user","sessionId":"`+id+`","cwd":"/work/repo","uuid":"u1","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"hi"}}`+"\n"), 0o644)
				for range 4 {
					h.poll()
				}
				os.Remove(path)
			}
			switch kind {
			case "fifo":
				if err := syscall.Mkfifo(path, 0o600); err != nil {
					t.Fatal(err)
				}
			case "loop":
				if err := os.Symlink(filepath.Base(path), path); err != nil {
					t.Fatal(err)
				}
				want = "symbolic link"
			case "long line":
				f, err := os.Create(path)
				if err != nil {
					t.Fatal(err)
				}
				f.Write(bytes.Repeat([]byte("x"), maxLine+1))
				f.WriteString("\n")
				f.Close()
				want = "1 lines over 16 MiB skipped"
			}
			for range 8 {
				h.poll()
			}
			got := h.e.Activity("s1").Skipped
			if len(got) != 1 || !strings.Contains(got[0], want) || !strings.Contains(got[0], path) {
				t.Fatalf("skipped notes %q, want one naming %s: %q", got, path, want)
			}
		})
	}
}
