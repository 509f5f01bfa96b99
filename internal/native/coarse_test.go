package native

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
	"github.com/musterhq/muster/internal/transcript"
)

// Gemini CLI 0.61.0's titles in a pane of directory repo (e2e/realcli
// TestMusterGeminiSignals).
var (
	geminiReady   = title("◇  Ready (repo)")
	geminiWorking = title("✦  Working… (repo)")
	geminiAction  = title("✋  Action Required (repo)")
)

// TestHooklessGemini replays the chat file Gemini CLI 0.61.0 wrote
// (testdata/gemini-states.jsonl: an Esc mid-turn, a refused tool, an API
// error) into a pane whose hooks are not installed, with the titles the
// CLI set, and the user's keys missed: each prompt is a run of its own,
// opened by the chat file, and ended by what the chat file marks (the
// cancels interrupted, the API error failed); a turn the chat file does
// not mark ends when the title says Ready again; the tool confirmation's
// "✋ Action Required" title is the run's approval (issue 23). Nothing
// runs before the first prompt.
func TestHooklessGemini(t *testing.T) {
	h, g := geminiPane(t, true, "node", "/usr/bin/gemini")
	h.e.Signals("s1", []termsignal.Signal{geminiReady})
	for range 3 {
		h.poll()
	}
	h.want()
	for g.next < len(g.lines) {
		l := g.lines[g.next]
		v := transcript.ParseBytes(l)
		if v.Get("timestamp").Exists() {
			if d := g.recordTimeOf(l).Sub(h.clk.Now()); d > 0 {
				h.clk.Advance(d)
			}
		}
		g.write(1, nil)
		switch typ := v.Get("type").String(); {
		case typ == "user" && !strings.HasPrefix(v.Get("content.0.text").String(), "<session_context>"):
			h.e.Signals("s1", []termsignal.Signal{geminiWorking})
		case typ == "gemini" && v.Get("toolCalls").Exists():
			h.e.Signals("s1", []termsignal.Signal{geminiAction})
		case typ == "info" || typ == "error":
			h.poll() // the chat file is read before the title changes
			h.e.Signals("s1", []termsignal.Signal{geminiReady})
		}
		h.poll()
	}
	// A text turn the chat file marks no end of: the title does.
	h.clk.Advance(time.Second)
	writeLine(t, g.path, `{"id":"u4","timestamp":"`+h.clk.Now().Format(time.RFC3339Nano)+`","type":"user","content":[{"text":"say hello"}]}`)
	h.poll()
	h.e.Signals("s1", []termsignal.Signal{geminiWorking})
	h.clk.Advance(time.Second)
	h.e.Signals("s1", []termsignal.Signal{geminiReady})
	h.poll()
	h.want(
		"turnStarted started R1 a turn to interrupt",
		"muster.transcript.turnEnded interrupted R1 chat file: info Request cancelled.",
		"turnStarted started R2 make a denied file",
		"muster.terminal.request approval-requested R2 OSC 0;✋  Action Required (repo)",
		"muster.transcript.turnEnded interrupted R2 chat file: info Request cancelled.",
		"turnStarted started R3 please fail",
		"muster.transcript.turnEnded failed R3 chat file: error [API Error: {\"error\":{\"code\":400,\"message\":\"scripted failure for gemini\",\"status\":\"INVALID_ARGUMENT…",
		"turnStarted started R4 say hello",
		"muster.terminal.turnEnded succeeded R4 OSC 0;◇  Ready (repo)",
	)
	if v := h.rec.view(h.clk.Now()); v.Run.State != proto.StateSucceeded {
		t.Errorf("after the last turn: %s, want succeeded", v.Run.State)
	}
	h.poll()
	if n := h.rec.count(); n != 9 {
		t.Errorf("%d events after an idle poll, want 9", n)
	}
}

// TestHooklessFastTurn: a turn whose whole working phase (title Working,
// then Ready) went by before the poll read its prompt from the chat file
// ends in that poll.
func TestHooklessFastTurn(t *testing.T) {
	h, g := geminiPane(t, true, "gemini")
	h.poll()
	h.clk.Advance(time.Second)
	writeLine(t, g.path, `{"sessionId":"aa3ac65c-1884-452c-956b-62539224443c","kind":"main"}`)
	writeLine(t, g.path, `{"id":"u1","timestamp":"`+h.clk.Now().Format(time.RFC3339Nano)+`","type":"user","content":[{"text":"quick"}]}`)
	h.clk.Advance(100 * time.Millisecond)
	h.e.Signals("s1", []termsignal.Signal{geminiWorking})
	h.clk.Advance(100 * time.Millisecond)
	h.e.Signals("s1", []termsignal.Signal{geminiReady})
	h.poll()
	h.want("turnStarted started R1 quick", "muster.terminal.turnEnded succeeded R1 OSC 0;◇  Ready (repo)")
}

// TestHooklessCodexCoarse: two hook-less Codexes in one directory (daemon
// mode: nothing proves which rollout is whose) get coarse runs, one per
// turn, opened by their OSC 7501 working and ended by its done (a turn
// that completed) or idle (an Esc), whatever key the user typed; its
// blocked is the run's approval (issue 23).
func TestHooklessCodexCoarse(t *testing.T) {
	h := newHarness(t)
	h.e.cfg.Runs = h.rec
	for i, id := range []string{"a", "b"} {
		h.procs.set(shellPID+i, "bash", "bash")
		h.procs.set(agentPGID+i, "codex", "codex")
		p := h.surface(id, "shell", shellPID+i)
		p.fg(agentPGID + i)
	}
	h.poll()
	h.e.Signals("a", []termsignal.Signal{status("state=idle:app=codex")})
	h.poll()
	h.want()
	turn := func(end string) {
		t.Helper()
		h.clk.Advance(time.Second)
		h.e.Signals("a", []termsignal.Signal{status("state=working:app=codex")})
		h.poll()
		h.clk.Advance(workGrace)
		h.poll()
		h.clk.Advance(time.Millisecond)
		h.e.Signals("a", []termsignal.Signal{status(end)})
		h.e.pollOnce(t.Context()) // woken by the change: at once
	}
	turn("state=done:app=codex")
	turn("state=idle:app=codex")
	h.clk.Advance(time.Second)
	h.e.Signals("a", []termsignal.Signal{status("state=working:app=codex")})
	h.poll()
	h.clk.Advance(workGrace)
	h.poll()
	h.e.Signals("a", []termsignal.Signal{status("state=blocked:app=codex:kind=permission")})
	h.poll()
	h.e.Signals("a", []termsignal.Signal{status("state=idle:app=codex")}) // refused
	h.e.pollOnce(t.Context())
	h.want(
		"launchObserved started R1 codex started (process group 200), working (OSC 7501;state=working:app=codex)",
		"muster.terminal.turnEnded succeeded R1 OSC 7501;state=done:app=codex",
		"launchObserved started R2 codex started (process group 200), working (OSC 7501;state=working:app=codex)",
		"muster.terminal.turnEnded interrupted R2 OSC 7501;state=idle:app=codex",
		"launchObserved started R3 codex started (process group 200), working (OSC 7501;state=working:app=codex)",
		"muster.terminal.request approval-requested R3 OSC 7501;state=blocked:app=codex:kind=permission",
		"muster.terminal.turnEnded interrupted R3 OSC 7501;state=idle:app=codex",
	)
	// Waiting after the end opens nothing, nor does work that began
	// before it.
	for range 5 {
		h.poll()
	}
	if n := h.rec.count(); n != 7 {
		t.Errorf("%d events while idle, want 7", n)
	}
	for _, ev := range h.rec.all() {
		if ev.SurfaceID.RawValue != "a" {
			t.Errorf("an event for b, which did nothing: %+v", ev)
		}
	}
}

// TestCoarseEndedByKey: a coarse run a key ended (fused) is not ended
// again by the terminal, and the next run needs new work.
func TestCoarseEndedByKey(t *testing.T) {
	h, _ := geminiPane(t, true, "gemini")
	h.e.Signals("s1", []termsignal.Signal{geminiWorking})
	h.poll()
	h.clk.Advance(workGrace)
	h.poll() // no chat file followed: the title opens a coarse run
	h.e.Input("s1", []byte("\x1b"))
	h.drain()
	h.e.Signals("s1", []termsignal.Signal{geminiReady})
	h.poll()
	h.poll()
	h.want(
		"launchObserved started R1 gemini started (process group 300), working (OSC 0;✦  Working… (repo))",
		"muster.keystroke.interrupted interrupted R1 Escape \"\\x1b\" typed while running",
	)
}

// writeLine appends one line to the file at path.
func writeLine(t *testing.T, path, line string) {
	t.Helper()
	g := &growing{t: t, path: path, lines: [][]byte{[]byte(line)}, clk: &clock{t: time.Now()}}
	g.write(1, nil)
}

// TestTranscriptWriteWakesThePoll: a record appended to a followed
// transcript is read at once, not at the next poll: with an hour between
// polls, only the transcript watcher can wake the loop.
func TestTranscriptWriteWakesThePoll(t *testing.T) {
	h := newHarness(t)
	h.e.poll = time.Hour
	const id = "22222222-2222-4333-8444-555555555555"
	g := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath(id), h.clk.Now(), nil)
	g.write(1, nil) // the session's first record, no prompt yet
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.e.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	for running := false; !running; time.Sleep(time.Millisecond) {
		h.e.wmu.Lock()
		running = h.e.wctx != nil
		h.e.wmu.Unlock()
	}
	h.procs.set(shellPID, "bash", "bash")
	p := h.surface("s1", "shell", shellPID)
	h.procs.set(agentPGID, "claude", "claude")
	p.setNativeID(id)
	p.fg(agentPGID)
	h.poll() // observes claude
	h.poll() // finds and follows its transcript
	if h.e.files.Load() == nil {
		t.Fatal("following a transcript made no watcher")
	}
	if n := h.rec.count(); n != 0 {
		t.Fatalf("%d events before the prompt", n)
	}
	g.write(0, isLine(`"promptId"`))
	giveUp := time.After(30 * time.Second) // a bound, not a measure: the next poll is an hour away
	for h.rec.count() == 0 {
		select {
		case err := <-done:
			t.Fatalf("Run returned %v", err)
		case <-giveUp:
			t.Fatal("the prompt was not read: nothing woke the poll loop")
		case <-time.After(10 * time.Millisecond):
		}
	}
	h.want("turnStarted started R1 say hi")
}
